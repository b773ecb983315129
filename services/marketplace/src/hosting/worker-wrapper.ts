/**
 * The code the marketplace wraps around every hosted Worker, bundled with it (hosting/build.ts), so both runners
 * run the same thing. The prelude is imported before the developer's modules, so their `console` and `fetch`
 * are already the prelude's when they first run:
 *
 * - every `console` line is kept with its time and level, by invocation (AsyncLocalStorage), lines printed while
 *   the modules load are the deployment's own (they come back with the readiness probe);
 * - an uncaught exception of `fetch` is logged with its stack and answered 500 (the marketplace then releases the
 *   call's hold); an unhandled rejection is logged;
 * - a request the outbound service refused (a host outside the egress allowlist) is logged;
 * - the answer goes back as one JSON envelope `{status, headers, body, logs, dropped}`, so the log lines of a call
 *   travel with it, on workerd and on Cloudflare alike, without a log pipeline of their own.
 *
 * The allowlist itself is enforced outside the developer's isolate (the runner's outbound service): this code only
 * reports, so code that goes around it gains nothing.
 */
export const probeHeader = 'x-platform-probe';
export const egressRefusedHeader = 'x-platform-egress-refused';

export function preludeSource(limits: { lineChars: number; linesPerCall: number }): string {
  return `
import { AsyncLocalStorage } from 'node:async_hooks';
const calls = new AsyncLocalStorage();
const loading = { lines: [], dropped: 0 };
const describe = (value) => {
  if (value instanceof Error) return value.stack && value.stack.includes(value.message) ? value.stack : value.name + ': ' + value.message + (value.stack ? '\\n' + value.stack : '');
  if (typeof value === 'string') return value;
  try { return JSON.stringify(value); } catch { return String(value); }
};
const record = (level, args) => {
  const store = calls.getStore() ?? loading;
  if (store.lines.length >= ${limits.linesPerCall}) { store.dropped += 1; return; }
  let message = args.map(describe).join(' ');
  if (message.length > ${limits.lineChars}) message = message.slice(0, ${limits.lineChars}) + ' … (cut at ${limits.lineChars} characters)';
  store.lines.push({ at: Date.now(), level, message });
};
for (const [method, level] of [['debug', 'debug'], ['info', 'info'], ['log', 'info'], ['warn', 'warn'], ['error', 'error'], ['trace', 'debug']])
  console[method] = (...args) => record(level, args);
const outboundFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const response = await outboundFetch(...args);
  const refused = response.headers.get('${egressRefusedHeader}');
  if (refused !== null) record('error', ['egress refused: ' + refused + ' is not in this worker’s egress_allowlist']);
  return response;
};
addEventListener('unhandledrejection', (event) => record('error', ['unhandled rejection: ' + describe(event.reason)]));
const envelope = (status, headers, body, store) =>
  new Response(JSON.stringify({ status, headers, body, logs: store.lines, dropped: store.dropped }), { headers: { 'content-type': 'application/json' } });
export function wrap(worker) {
  return {
    async fetch(request, env, ctx) {
      if (request.headers.get('${probeHeader}') === '1') {
        const answer = envelope(204, {}, '', loading);
        loading.lines = [];
        loading.dropped = 0;
        return answer;
      }
      const store = { lines: [], dropped: 0 };
      return calls.run(store, async () => {
        let response;
        try {
          if (typeof worker?.fetch !== 'function') throw new TypeError('the main module’s default export has no fetch(request, env, ctx)');
          response = await worker.fetch(request, env, ctx);
          if (!(response instanceof Response)) throw new TypeError('fetch returned ' + describe(response) + ', not a Response');
        } catch (error) {
          record('error', ['uncaught ' + describe(error)]);
          return envelope(500, {}, JSON.stringify({ error: 'worker_threw', message: error instanceof Error ? error.message : describe(error) }), store);
        }
        const body = await response.text();
        return envelope(response.status, Object.fromEntries(response.headers), body, store);
      });
    },
  };
}
`;
}

export function entrySource(mainModule: string): string {
  return `import { wrap } from 'platform:prelude';\nimport worker from ${JSON.stringify(`./${mainModule}`)};\nexport default wrap(worker);\n`;
}
