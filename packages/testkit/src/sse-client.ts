import { type ClientRequest, get, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id: string | undefined;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever payload the stream sends.
  data: any;
}

/** A real HTTP client of an SSE stream that parses events as they arrive. */
export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  events: SseEvent[];
  /** Comment lines (`: heartbeat`) and `retry:` fields, in order. */
  other: string[];
  ended: boolean;
  /** The whole body, for refusals (JSON envelopes). */
  body: Promise<string>;
  response: IncomingMessage;
  close(): void;
}

/**
 * Opens an SSE stream over node:http (its own socket: `agent: false`). With `read: false` the client never reads,
 * so the socket fills and the server sees a slow subscriber.
 *
 * @example const stream = await openSse(`${url}/events`, { authorization: `Bearer ${token}` }); await eventually(() => stream.events.length > 0, 'an event')
 */
export function openSse(url: string, headers: Record<string, string> = {}, options: { read?: boolean } = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const request: ClientRequest = get(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false }, (response) => {
      const client: SseClient = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        events: [],
        other: [],
        ended: false,
        body: Promise.resolve(''),
        response,
        close: () => request.destroy(),
      };
      response.on('error', () => {});
      response.on('close', () => {
        client.ended = true;
      });
      if (options.read === false) return resolve(client);
      response.setEncoding('utf8');
      let buffer = '';
      let text = '';
      client.body = new Promise((done) => response.on('end', () => done(text)));
      response.on('data', (chunk: string) => {
        text += chunk;
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ''));
          }
          if (fields.has('event') || fields.has('data')) {
            const data = fields.get('data') ?? '';
            let parsed: unknown = data;
            try {
              parsed = JSON.parse(data);
            } catch {
              // Not JSON: kept as text.
            }
            client.events.push({ id: fields.get('id'), event: fields.get('event') ?? 'message', data: parsed });
          } else client.other.push(block);
        }
      });
      resolve(client);
    });
    request.on('error', reject);
  });
}

/**
 * The first `count` events of `client`, once they have arrived, without spinning the event loop. Fails, with what did
 * arrive and `state()`, when the stream ends first or after `timeoutMs` of wall time: a guard so that a missing event
 * is reported with evidence instead of running into the test runner's timeout, not a wait for business time.
 *
 * @example const [first, second] = await eventsArrived(stream, 2, { state: () => `head ${hub.head}` })
 */
export function eventsArrived(client: SseClient, count: number, options: { timeoutMs?: number; state?: () => string } = {}): Promise<SseEvent[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const failure = (why: string) =>
      new Error(`${client.events.length} of ${count} events ${why}: ${JSON.stringify(client.events)}${options.state ? `; ${options.state()}` : ''}`);
    const check = () => {
      if (client.events.length < count) return;
      done();
      resolve(client.events.slice(0, count));
    };
    const ended = () => {
      done();
      reject(failure('before the stream ended'));
    };
    const timer = setTimeout(() => {
      done();
      reject(failure(`after ${timeoutMs} ms`));
    }, timeoutMs);
    // Registered after openSse's own listener, so the events of a chunk are parsed when this runs.
    const done = () => {
      clearTimeout(timer);
      client.response.off('data', check);
      client.response.off('close', ended);
    };
    client.response.on('data', check);
    client.response.on('close', ended);
    check();
  });
}
