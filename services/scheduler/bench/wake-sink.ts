import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP endpoint standing in for the agent's wake route; it only records when each wake arrived. */
export interface WakeSink {
  /** `http://127.0.0.1:<port>/wake` */
  url: string;
  /** Distinct Idempotency-Keys received so far. */
  received(): number;
  /** Receive time minus `scheduled_for`, in ms, one per distinct key (first arrival), in arrival order. */
  lateness(): number[];
  /** Epoch ms of the latest first arrival (0 before any); the end of the fires/s window. */
  lastReceivedAt(): number;
  /** Requests whose key had already arrived (retries or double dispatch). */
  duplicates(): number;
  /** Forgets everything received and rejects pending waiters, so one sink serves several runs. */
  reset(): void;
  /** Resolves once `count` distinct keys have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface WakeSinkOptions {
  /** When set, requests without `Authorization: Bearer <token>` get 401 and are not counted. */
  token?: string;
}

interface Waiter {
  count: number;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const OK_BODY = Buffer.from('{"ok":true}');
const OK_HEADERS = { 'content-type': 'application/json', 'content-length': String(OK_BODY.length) };

export async function startWakeSink(options: WakeSinkOptions = {}): Promise<WakeSink> {
  const expectedAuth = options.token === undefined ? undefined : `Bearer ${options.token}`;
  let seen = new Set<string>();
  let late: number[] = [];
  let dupes = 0;
  let lastAt = 0;
  let waiters: Waiter[] = [];

  // Called once per new key: settling waiters here (not via polling) keeps waitFor's wake-up exact.
  const settleWaiters = (): void => {
    if (waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of waiters) {
      if (seen.size >= w.count) {
        clearTimeout(w.timer);
        w.resolve();
      } else still.push(w);
    }
    waiters = still;
  };

  const dropWaiters = (why: string): void => {
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`wake sink ${why} while waiting`));
    }
    waiters = [];
  };

  const record = (key: string, scheduledFor: number): void => {
    const now = Date.now();
    if (seen.has(key)) {
      dupes++;
      return;
    }
    seen.add(key);
    late.push(now - scheduledFor);
    lastAt = now;
    settleWaiters();
  };

  const reply = (res: http.ServerResponse, status: number, message: string): void => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(message);
  };

  const server = http.createServer((req, res) => {
    if (expectedAuth !== undefined && req.headers.authorization !== expectedAuth) {
      req.resume();
      reply(res, 401, 'bad bearer');
      return;
    }
    const key = req.headers['idempotency-key'];
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => {
      if (typeof key !== 'string') return reply(res, 400, 'missing Idempotency-Key');
      let scheduledFor: unknown;
      try {
        scheduledFor = (JSON.parse(text) as { scheduled_for?: unknown }).scheduled_for;
      } catch {
        return reply(res, 400, 'bad json');
      }
      // Peers send epoch ms; the scheduler sends ISO 8601, as on its real wire.
      const dueMs = typeof scheduledFor === 'string' ? Date.parse(scheduledFor) : scheduledFor;
      if (typeof dueMs !== 'number' || Number.isNaN(dueMs)) return reply(res, 400, 'missing scheduled_for');
      record(key, dueMs);
      res.writeHead(200, OK_HEADERS);
      res.end(OK_BODY);
    });
  });
  // Clients keep connections alive; a long idle timeout avoids reconnect storms between bursts.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/wake`,
    received: () => seen.size,
    lateness: () => late.slice(),
    lastReceivedAt: () => lastAt,
    duplicates: () => dupes,
    reset() {
      dropWaiters('reset');
      seen = new Set();
      late = [];
      dupes = 0;
      lastAt = 0;
    },
    waitFor(count, timeoutMs) {
      if (seen.size >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w.timer !== timer);
          reject(new Error(`wake sink: ${seen.size}/${count} wakes after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push({ count, resolve, reject, timer });
      });
    },
    close() {
      dropWaiters('closed');
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Idle keep-alive sockets would otherwise hold close() open for keepAliveTimeout.
        server.closeAllConnections();
      });
    },
  };
}
