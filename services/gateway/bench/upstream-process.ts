import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';

/*
 * A lean OpenAI-compatible upstream for the benchmark, in a process of its own so its work is not billed to the
 * gateway or the load generator. Whole answers return at once with usage; streams send `chunks` content chunks
 * `chunkIntervalMs` apart, each stamped with the epoch time it was written (`sent_at`, ms with fractions), then the
 * usage chunk when asked and [DONE].
 */

export interface UpstreamSettings {
  chunks: number;
  chunkIntervalMs: number;
}

const epochMs = () => performance.timeOrigin + performance.now();
const usage = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 };

function answer(model: string): string {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you?' }, finish_reason: 'stop' }],
    usage,
  });
}

function stream(response: http.ServerResponse, model: string, withUsage: boolean, settings: UpstreamSettings): void {
  const chunk = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices, ...(withUsage ? { usage: null } : {}), sent_at: epochMs(), ...extra })}\n\n`;
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  let sent = 0;
  const timer = setInterval(() => {
    if (response.destroyed) return clearInterval(timer);
    if (sent < settings.chunks) {
      sent++;
      response.write(chunk([{ index: 0, delta: { content: `w${sent} ` }, finish_reason: null }]));
      return;
    }
    clearInterval(timer);
    response.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
    if (withUsage) response.write(chunk([], { usage }));
    response.end('data: [DONE]\n\n');
  }, settings.chunkIntervalMs);
}

export async function startBenchUpstream(settings: UpstreamSettings): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (part: string) => {
      text += part;
    });
    request.on('end', () => {
      const body = JSON.parse(text) as { model: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
      if (body.stream === true) return stream(response, body.model, body.stream_options?.include_usage === true, settings);
      const payload = answer(body.model);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }).end(payload);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const handlers = {
  cpu: () => process.cpuUsage(),
  stop: () => {
    setImmediate(() => process.exit(0));
  },
};

export type UpstreamProcess = Child<typeof handlers, { url: string; pid: number }>;

export function startUpstreamProcess(settings: UpstreamSettings): Promise<UpstreamProcess> {
  return forkChild(fileURLToPath(import.meta.url), settings);
}

if (import.meta.main) {
  const upstream = await startBenchUpstream(JSON.parse(process.argv[2] ?? '{}') as UpstreamSettings);
  serveChild(handlers, { url: upstream.url, pid: process.pid });
}
