import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';

/*
 * A thousand SSE subscribers in a process of their own. Each records when every event id reached it; the parent asks
 * for, per event, the first and the last arrival (epoch ms) across subscribers. Parsing is kept to finding `id:` and
 * `"at":"…"` so the subscribers' own work stays small next to the server's.
 */

const arrivals = new Map<string, { first: number; last: number; count: number; at: number }>();
const sockets: http.ClientRequest[] = [];
const epochMs = () => performance.timeOrigin + performance.now();

function open(args: { url: string; count: number; token: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    let opened = 0;
    for (let index = 0; index < args.count; index++) {
      const request = http.get(args.url, { agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${args.token}` } }, (response) => {
        if (response.statusCode !== 200) return reject(new Error(`subscriber ${index} got ${response.statusCode}`));
        response.setEncoding('utf8');
        let buffer = '';
        response.on('data', (chunk: string) => {
          const now = epochMs();
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
            const id = /^id: (.+)$/m.exec(frame)?.[1];
            const at = /"at":"([^"]+)"/.exec(frame)?.[1];
            if (id === undefined || at === undefined) continue;
            const entry = arrivals.get(id) ?? { first: now, last: now, count: 0, at: Date.parse(at) };
            entry.first = Math.min(entry.first, now);
            entry.last = Math.max(entry.last, now);
            entry.count++;
            arrivals.set(id, entry);
          }
        });
        if (++opened === args.count) resolve(opened);
      });
      request.on('error', reject);
      sockets.push(request);
    }
  });
}

const handlers = {
  open,
  /** Per event seen by every subscriber: ms from its `at` to the last subscriber, and from the first to the last. */
  results(args: { count: number }) {
    const complete = [...arrivals.values()].filter((entry) => entry.count === args.count);
    return {
      events: complete.length,
      partial: arrivals.size - complete.length,
      toLast: complete.map((entry) => entry.last - entry.at),
      spread: complete.map((entry) => entry.last - entry.first),
    };
  },
  reset() {
    arrivals.clear();
    return true;
  },
  close() {
    for (const socket of sockets.splice(0)) socket.destroy();
    return true;
  },
};

export type SubscribersProcess = Child<typeof handlers, null>;

export function startSubscribers(): Promise<SubscribersProcess> {
  return forkChild(fileURLToPath(import.meta.url), null);
}

if (import.meta.main) serveChild(handlers, null);
