/** Checks made back to back (one per turn of the event loop) before `eventually` starts pausing between checks. */
const spinningChecks = 1_000;
/** How long `eventually` waits at most, whatever its turn budget: a failing wait reports before the test times out. */
const giveUpMs = 120_000;

/**
 * Waits until `condition` holds: first once per turn of the event loop (in-process work is usually done within a few
 * turns), then, after a thousand checks, once a millisecond (every 4 ms after two thousand), and never forever: at
 * most `maxTurns` checks and two minutes. Pausing matters on our two-core machines: a check spinning flat out while
 * it waits for another process (a socket's data, a service's answer) took the very CPU that process needed, and the
 * whole suite's time grew with how loaded the machine already was.
 *
 * @example await eventually(async () => (await pendingRows()) === 0, 'all outcomes written')
 */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string | (() => string), maxTurns = 200_000): Promise<void> {
  const deadline = Date.now() + giveUpMs;
  for (let turn = 0; turn < maxTurns; turn++) {
    if (await condition()) return;
    if (turn < spinningChecks) await new Promise((resolve) => setImmediate(resolve));
    else if (Date.now() > deadline) break;
    else await new Promise((resolve) => setTimeout(resolve, turn < 2 * spinningChecks ? 1 : 4));
  }
  throw new Error(`gave up waiting: ${typeof what === 'string' ? what : what()}`);
}

/**
 * Polls another process's state (a service's HTTP answer, a process table) every `intervalMs` until `check` holds,
 * for at most `timeoutMs`. For state this process cannot be told about; within a process use `eventually`.
 *
 * @example await pollUntil(async () => (await fetch(url)).ok, 'the withdrawal is paid', { timeoutMs: 30_000 })
 */
export async function pollUntil(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting after ${options.timeoutMs ?? 60_000} ms: ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}
