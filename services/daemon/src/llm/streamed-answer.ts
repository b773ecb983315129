import { readServerEvents } from '@platform/client/sse-reader';

/** Receives a streamed answer as it arrives: `restart` when an answer (a retry's included) begins, then its pieces. */
export interface ContentReceiver {
  restart(): void;
  append(piece: string): void;
}

/** What a streamed answer came to: the whole content, or why there is none (an error event, a stream cut short). */
export type StreamOutcome = { content: string; model: string } | { failure: { code: string; message: string } };

interface ChunkFields {
  choices?: { delta?: { content?: unknown } }[];
  model?: unknown;
  error?: { message?: unknown; code?: unknown };
}

/**
 * Reads an OpenAI-style chat-completions stream (`data:` chunks with `choices[0].delta.content`, ending with
 * `data: [DONE]`), handing each piece of content to `receiver` as it comes and assembling the whole. An error event
 * (the gateway sends one when the upstream breaks off or stalls mid-answer) or an end without [DONE] is a failure:
 * half an answer is never taken for a whole one.
 */
export async function readStreamedAnswer(body: AsyncIterable<Uint8Array>, model: string, receiver: ContentReceiver): Promise<StreamOutcome> {
  receiver.restart();
  let content = '';
  let answeredModel = model;
  for await (const event of readServerEvents(body)) {
    if (event.data === '[DONE]') return { content, model: answeredModel };
    let chunk: ChunkFields;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      return { failure: { code: 'bad_answer', message: 'the model streamed an event that is not JSON' } };
    }
    if (chunk.error !== undefined) {
      const code = typeof chunk.error.code === 'string' ? chunk.error.code : 'stream_error';
      return { failure: { code, message: typeof chunk.error.message === 'string' ? chunk.error.message : 'the answer stream failed' } };
    }
    if (typeof chunk.model === 'string') answeredModel = chunk.model;
    const piece = chunk.choices?.[0]?.delta?.content;
    if (typeof piece === 'string' && piece !== '') {
      content += piece;
      receiver.append(piece);
    }
  }
  return { failure: { code: 'incomplete_answer', message: 'the answer stream ended before [DONE]' } };
}
