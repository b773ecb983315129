import { createWakePoster, type WakePoster } from '../src/dispatch/wake-delivery.ts';

/*
 * The peers' wake POST. It goes through the scheduler's own wake poster (undici's Pool, kept-alive connections),
 * so every contender pays the same HTTP client cost per wake and the comparison is of the scheduling, not of two
 * HTTP clients. Only the connection count differs, set to what each side can have in flight: the peers' job
 * concurrency is their own tuning (see peers/*.ts), and 64 connections cover graphile-worker's 50 jobs in flight.
 */
const CONNECTIONS = 64;
/**
 * BENCH_WAKE_PIPELINING=N sends up to N wakes per connection before the first answer, for every contender alike.
 * Off (1) by default, as in the scheduler's production delivery.
 */
export const benchPipelining = Number(process.env.BENCH_WAKE_PIPELINING ?? 1);
const TIMEOUT_MS = 10_000;
const posters = new Map<string, WakePoster>();

function posterFor(url: string, token: string): WakePoster {
  const key = `${url} ${token}`;
  let found = posters.get(key);
  if (!found) {
    found = createWakePoster({ url, token, timeoutMs: TIMEOUT_MS, connections: CONNECTIONS, pipelining: benchPipelining });
    posters.set(key, found);
  }
  return found;
}

/**
 * POSTs one wake as JSON. Resolves on a 2xx answer; rejects on any other status, a socket error or
 * no answer within 10 s, so queue libraries see a failed job and retry it.
 */
export async function postWake(url: string, token: string, body: object, idempotencyKey: string): Promise<void> {
  const result = await posterFor(url, token).post(JSON.stringify(body), idempotencyKey);
  if (!result.ok) throw new Error(result.error);
}

/** Closes idle keep-alive connections so a finished benchmark process can exit. */
export function closeWakeClient(): void {
  for (const found of posters.values()) void found.close();
  posters.clear();
}

/**
 * Sends `count` throwaway wakes (keys `warm-up:<i>`, 50 in flight) so JIT compilation and socket
 * setup of the POST path happen before the first measured run instead of penalising whichever
 * contender goes first. Reset the sink afterwards.
 */
export async function warmWakeClient(url: string, token: string, count = 1_000): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      await postWake(url, token, { scheduled_for: Date.now(), warm_up: i }, `warm-up:${i}`);
    }
  };
  await Promise.all(Array.from({ length: 50 }, lane));
}
