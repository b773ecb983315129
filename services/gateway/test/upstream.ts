import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the upstream received it. */
export interface ReceivedCall {
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever body shape they sent.
  body: any;
}

/**
 * What a call asks of the test upstream, written into the last message's text (or the embedding input) so parallel
 * calls can each ask for something else: `[status=503]` refuses with that status, `[hang]` never answers,
 * `[words=3]` answers three words (3 completion tokens), `[prompt=120]` reports 120 prompt tokens (default 7),
 * `[no-usage]` reports none, `[pause-after=1]` stops a stream after that many words until `release()`,
 * `[stall-after=1]` stops it for good, `[error-event]` ends a stream with an error event instead of usage.
 */
interface Directives {
  status?: number;
  hang: boolean;
  words: number;
  prompt: number;
  noUsage: boolean;
  pauseAfter?: number;
  stallAfter?: number;
  errorEvent: boolean;
}

function directivesOf(text: string): Directives {
  const number = (name: string) => {
    const match = new RegExp(`\\[${name}=(\\d+)\\]`).exec(text);
    return match ? Number(match[1]) : undefined;
  };
  return {
    ...(number('status') === undefined ? {} : { status: number('status') }),
    hang: text.includes('[hang]'),
    words: number('words') ?? 5,
    prompt: number('prompt') ?? 7,
    noUsage: text.includes('[no-usage]'),
    ...(number('pause-after') === undefined ? {} : { pauseAfter: number('pause-after') }),
    ...(number('stall-after') === undefined ? {} : { stallAfter: number('stall-after') }),
    errorEvent: text.includes('[error-event]'),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: request bodies are whatever the gateway forwarded.
function promptText(body: any): string {
  if (typeof body?.input === 'string') return body.input;
  const last = Array.isArray(body?.messages) ? body.messages.at(-1) : undefined;
  return typeof last?.content === 'string' ? last.content : '';
}

export const upstreamErrorBody = (status: number) => `{"error":{"message":"upstream refused with ${status}","type":"upstream_test","code":"test_${status}"}}`;

/**
 * A local OpenAI-compatible upstream over real HTTP: chat completions (whole or streamed as real SSE, with the usage
 * chunk when `stream_options.include_usage` is set) and embeddings, with usage; errors, hangs and pauses on demand.
 * It records what it received, so tests can check keys, headers and bodies, and that a refused call never arrived.
 */
export async function startUpstream() {
  const received: ReceivedCall[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let paused: Array<() => void> = [];
  let streamsCut = 0;
  let streamsCompleted = 0;

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ path: request.url ?? '', headers: request.headers, body });
      for (const waiter of [...waiters]) if (received.length >= waiter.count) waiter.resolve();
      const directives = directivesOf(promptText(body));
      if (directives.hang) return;
      if (directives.status !== undefined) {
        response.writeHead(directives.status, { 'content-type': 'application/json', 'x-upstream-marker': 'refused' }).end(upstreamErrorBody(directives.status));
        return;
      }
      if (request.url?.endsWith('/embeddings')) return answerEmbedding(response, body, directives);
      if (body.stream === true) return void streamChat(response, body, directives);
      answerChat(response, body, directives);
    });
  });

  const usage = (d: Directives) => ({ prompt_tokens: d.prompt, completion_tokens: d.words, total_tokens: d.prompt + d.words });
  const words = (d: Directives) => Array.from({ length: d.words }, (_, i) => `word${i + 1}`);

  // biome-ignore lint/suspicious/noExplicitAny: echoes the request's model.
  function answerChat(response: ServerResponse, body: any, d: Directives): void {
    const answer = {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: words(d).join(' ') }, finish_reason: 'stop' }],
      ...(d.noUsage ? {} : { usage: usage(d) }),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }

  // biome-ignore lint/suspicious/noExplicitAny: echoes the request's model.
  function answerEmbedding(response: ServerResponse, body: any, d: Directives): void {
    const answer = {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] }],
      model: body.model,
      ...(d.noUsage ? {} : { usage: { prompt_tokens: d.prompt, total_tokens: d.prompt } }),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }

  // biome-ignore lint/suspicious/noExplicitAny: echoes the request's model.
  async function streamChat(response: ServerResponse, body: any, d: Directives): Promise<void> {
    const withUsage = body.stream_options?.include_usage === true;
    let cut = false;
    response.on('close', () => {
      if (!response.writableFinished) {
        cut = true;
        streamsCut++;
      }
    });
    const chunk = (choices: unknown[], extra: object = {}) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, choices, ...(withUsage ? { usage: null } : {}), ...extra })}\n\n`;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
    const list = words(d);
    for (let i = 0; i < list.length; i++) {
      if (cut) return;
      if (d.stallAfter === i) return;
      if (d.pauseAfter === i) await new Promise<void>((resolve) => paused.push(resolve));
      if (cut) return;
      response.write(chunk([{ index: 0, delta: { content: `${list[i]} ` }, finish_reason: null }]));
    }
    if (d.errorEvent) {
      response.end('data: {"error":{"message":"upstream failed mid-stream","type":"server_error","code":"test_stream_error"}}\n\n');
      return;
    }
    response.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
    if (withUsage && !d.noUsage) response.write(chunk([], { usage: usage(d) }));
    response.end('data: [DONE]\n\n');
    streamsCompleted++;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    /** Streams the gateway hung up on before they ended, and streams sent to the end. */
    counts: () => ({ streamsCut, streamsCompleted }),
    /** Resolves once `count` calls have arrived in total. */
    waitFor(count: number): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    /** Lets every stream paused by `[pause-after=N]` go on. */
    release(): void {
      for (const resume of paused.splice(0)) resume();
    },
    pausedCount: () => paused.length,
    async close() {
      paused = [];
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Upstream = Awaited<ReturnType<typeof startUpstream>>;
