import http from 'node:http';

/*
 * Why node:http and not fetch: `undici` is not installed as a package here, so its request()/Agent
 * are out of reach, and Node's global fetch (undici inside, keep-alive by default) measured ~3x
 * slower on this 2-core box: ~5.5-6.8k req/s against ~15-21k req/s for http.request with a
 * keep-alive Agent, same in-process sink, 50 and 200 in flight. At fetch's rate the client, not the
 * scheduler under test, would cap fires/s. Every contender must post through this one helper.
 */
const agent = new http.Agent({
  keepAlive: true,
  // Enough parallel sockets to saturate the sink; more only adds accept/handshake churn.
  maxSockets: 64,
  keepAliveMsecs: 30_000,
});

const TIMEOUT_MS = 10_000;

/**
 * POSTs one wake as JSON. Resolves on a 2xx answer; rejects on any other status, a socket error or
 * no answer within 10 s, so queue libraries see a failed job and retry it.
 */
export function postWake(url: string, token: string, body: object, idempotencyKey: string): Promise<void> {
  const payload = JSON.stringify(body);
  return new Promise<void>((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        timeout: TIMEOUT_MS,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          authorization: `Bearer ${token}`,
          'idempotency-key': idempotencyKey,
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        // Drain the answer so the socket goes back to the keep-alive pool.
        res.resume();
        res.on('end', () => {
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`wake POST answered ${status}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`wake POST timed out after ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Closes idle keep-alive sockets so a finished benchmark process can exit. */
export function closeWakeClient(): void {
  agent.destroy();
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
