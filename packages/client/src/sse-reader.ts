/** One server-sent event as a client reads it. */
export interface ServerEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * Parses a `text/event-stream` body as it arrives (the WHATWG rules the daemon and settlement streams need: `id`,
 * `event`, multi-line `data`, comments ignored, CRLF or LF). Ends when the body ends. A fetch body or a Node stream
 * (the daemon reads its model's answer from a node:http response).
 *
 * @example for await (const event of readServerEvents(response.body)) console.log(event.event, JSON.parse(event.data))
 */
export async function* readServerEvents(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r?\n/);
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
      newline = buffer.search(/\r?\n/);
      if (line === '') {
        if (data.length > 0 || event !== '') yield { id, event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  }
}
