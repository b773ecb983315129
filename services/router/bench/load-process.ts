import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';
import { type Outcome, openLoop } from '@platform/testkit/load-loops';
import { max, p50, p99 } from '@platform/testkit/stats';

/*
 * The load generator in its own process: GETs over node:http keep-alive with the headers each target needs, an open
 * loop at a fixed rate (latency from each call's due time, so a stall is charged to every call it delays), and a burst
 * of concurrent calls for the cold-start rows.
 */

const agent = new http.Agent({ keepAlive: true, maxSockets: 2048 });

function get(url: string, headers: Record<string, string>): Promise<{ status: number; firstByteMs: number }> {
  const sent = performance.now();
  return new Promise((resolve) => {
    const request = http.get(url, { agent, headers }, (response) => {
      let first = 0;
      response.on('data', () => {
        if (first === 0) first = performance.now() - sent;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, firstByteMs: first || performance.now() - sent }));
      response.on('error', () => resolve({ status: 0, firstByteMs: performance.now() - sent }));
    });
    request.on('error', () => resolve({ status: 0, firstByteMs: performance.now() - sent }));
  });
}

const outcome = (status: number): Outcome => (status === 200 ? { ok: true } : { ok: false, label: String(status) });

const handlers = {
  async rate(args: { url: string; headers: Record<string, string>; perSecond: number; seconds: number }) {
    const tally = await openLoop(args.perSecond, args.seconds * 1000, async () => outcome((await get(args.url, args.headers)).status));
    return { ok: tally.ok, errors: Object.fromEntries(tally.errors), p50: p50(tally.latencies), p99: p99(tally.latencies), max: max(tally.latencies) };
  },
  async once(args: { url: string; headers: Record<string, string> }) {
    return get(args.url, args.headers);
  },
  async burst(args: { url: string; headers: Record<string, string>; count: number }) {
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: args.count }, () => get(args.url, args.headers)));
    return { errors: answers.filter((answer) => answer.status !== 200).length, lastMs: performance.now() - started };
  },
};

export type LoadProcess = Child<typeof handlers, null>;

export function startLoad(): Promise<LoadProcess> {
  return forkChild(fileURLToPath(import.meta.url), null);
}

if (import.meta.main) serveChild(handlers, null);
