import type { Clock } from '@platform/kit/clock';

/** What `byDeadline` resolves with when the deadline came first. */
export const late: unique symbol = Symbol('late');

/**
 * `work`'s value, or `late` once `clock` reaches `deadline` (ms since the epoch) first; a failure of `work` before then
 * is thrown. Only the wait ends at the deadline: the work goes on (a provisioning or a start the next request finds).
 */
export async function byDeadline<T>(clock: Clock, deadline: number, work: Promise<T>): Promise<T | typeof late> {
  const left = deadline - clock.now().getTime();
  if (left <= 0) {
    work.catch(() => {});
    return late;
  }
  const timer = new AbortController();
  try {
    return await Promise.race([work, clock.sleep(left, timer.signal).then((): typeof late => late)]);
  } finally {
    timer.abort('settled');
  }
}
