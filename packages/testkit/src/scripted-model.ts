import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Arrivals, listenOnFreePort } from './local-server.ts';

/** One chat-completions request as the model server received it. */
export interface ModelRequest {
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever body shape was sent.
  body: any;
  model: string;
  /** `response_format.json_schema.name` when a structured answer was asked for. */
  schemaName: string | undefined;
  system: string;
  /** The last user message. */
  user: string;
  /** Every message's content, joined: for "was this in the prompt" checks. */
  prompt: string;
}

/**
 * What a script answers: text (the message content), an object (sent as its JSON text), the content in `chunks`, a
 * refusal with an OpenAI-shaped error body, or `hang` (no answer until the server closes). A promise of any of these
 * answers when it resolves, which is how a test makes a slow model without waiting for time; a promise among the
 * chunks holds the rest of a streamed answer back until the test resolves it (or rejects it: the connection breaks).
 */
export type ModelReply =
  | string
  | Record<string, unknown>
  | { chunks: (string | Promise<string>)[] }
  | { status: number; code?: string; message?: string }
  | { hang: true };
export type ModelScript = (request: ModelRequest) => ModelReply | Promise<ModelReply>;

function isRefusal(reply: ModelReply): reply is { status: number; code?: string; message?: string } {
  return (
    typeof reply === 'object' &&
    typeof (reply as { status?: unknown }).status === 'number' &&
    Object.keys(reply).every((key) => ['status', 'code', 'message'].includes(key))
  );
}

function isChunked(reply: ModelReply): reply is { chunks: (string | Promise<string>)[] } {
  return typeof reply === 'object' && Array.isArray((reply as { chunks?: unknown }).chunks) && Object.keys(reply).length === 1;
}

/** Pieces of a streamed text as a provider sends them: a few characters each, never a whole answer at once. */
const streamPieceChars = 12;

/**
 * A local OpenAI-compatible model server over real HTTP whose answers a test scripts: `POST /v1/chat/completions`
 * answers with the script's reply and a usage block; asked with `stream: true`, as server-sent `chat.completion.chunk`
 * events (a few characters each, or the script's own `chunks`) ending with `[DONE]`, and the usage chunk when
 * `stream_options.include_usage` asks for it. It records every request, so a test can check what a prompt
 * carried and which slot's model was asked.
 *
 * @example const model = await startScriptedModel((request) => request.schemaName === 'plan' ? plan : 'done')
 */
export async function startScriptedModel(initial: ModelScript = () => 'ok') {
  let script = initial;
  const arrivals = new Arrivals<ModelRequest>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      let body: ModelRequest['body'];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        response
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"error":{"message":"not JSON","type":"invalid_request_error","code":"invalid_json"}}');
        return;
      }
      const messages: { role: string; content: string }[] = Array.isArray(body?.messages) ? body.messages : [];
      const modelRequest: ModelRequest = {
        path: request.url ?? '',
        headers: request.headers,
        body,
        model: String(body?.model ?? ''),
        schemaName: body?.response_format?.json_schema?.name,
        system: messages
          .filter((message) => message.role === 'system')
          .map((message) => message.content)
          .join('\n'),
        user: messages.filter((message) => message.role === 'user').at(-1)?.content ?? '',
        prompt: messages.map((message) => message.content).join('\n'),
      };
      arrivals.push(modelRequest);
      let reply: ModelReply;
      try {
        reply = await script(modelRequest);
      } catch (error) {
        reply = { status: 500, code: 'script_error', message: String(error) };
      }
      if (typeof reply === 'object' && (reply as { hang?: unknown }).hang === true) return;
      if (isRefusal(reply)) {
        const error = { message: reply.message ?? `refused with ${reply.status}`, type: 'scripted', code: reply.code ?? `scripted_${reply.status}` };
        response.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
        return;
      }
      const id = `chatcmpl-${arrivals.received.length}`;
      const usage = (content: string) => ({
        prompt_tokens: Math.ceil(modelRequest.prompt.length / 4),
        completion_tokens: Math.ceil(content.length / 4),
        total_tokens: 0,
      });
      const pieces = isChunked(reply) ? reply.chunks : piecesOf(typeof reply === 'string' ? reply : JSON.stringify(reply));
      if (body?.stream === true) {
        const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model: modelRequest.model, choices, ...extra })}\n\n`;
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        response.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
        let content = '';
        for (const piece of pieces) {
          // A chunk the test rejects is a model that breaks off mid-answer: the connection is cut.
          const text = await Promise.resolve(piece).catch(() => undefined);
          if (text === undefined) response.destroy();
          if (text === undefined || response.destroyed) return;
          content += text;
          response.write(chunk([{ index: 0, delta: { content: text }, finish_reason: null }]));
        }
        response.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
        if (body?.stream_options?.include_usage === true) response.write(chunk([], { usage: usage(content) }));
        response.end('data: [DONE]\n\n');
        return;
      }
      const content = await Promise.all(pieces).then(
        (texts) => texts.join(''),
        () => undefined,
      );
      if (content === undefined) {
        response.destroy();
        return;
      }
      const answer = {
        id,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: modelRequest.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: usage(content),
      };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  const { port, close } = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received: arrivals.received,
    setScript(next: ModelScript) {
      script = next;
    },
    /** Resolves once `count` requests have arrived in total. */
    waitFor: (count: number) => arrivals.waitFor(count),
    close,
  };
}

function piecesOf(content: string): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < content.length; at += streamPieceChars) pieces.push(content.slice(at, at + streamPieceChars));
  return pieces;
}

export type ScriptedModel = Awaited<ReturnType<typeof startScriptedModel>>;
