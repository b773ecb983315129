import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readStreamedAnswer } from './streamed-answer.ts';

const event = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const delta = (content: string) => event({ object: 'chat.completion.chunk', model: 'm-1', choices: [{ index: 0, delta: { content } }] });

async function* bytes(...chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

function receiver() {
  const seen = { restarts: 0, pieces: [] as string[] };
  return { seen, restart: () => seen.restarts++, append: (piece: string) => seen.pieces.push(piece) };
}

describe('reading a streamed chat answer', () => {
  it('assembles the content whatever byte the network splits it at, multi-byte characters included', async () => {
    const body = new TextEncoder().encode(`${delta('{"reply":"caf')}${delta('é 😀')}: keep-alive\n\n${delta('"}')}data: [DONE]\n\n`);
    for (let at = 0; at <= body.length; at++) {
      const into = receiver();
      const outcome = await readStreamedAnswer(bytes(body.subarray(0, at), body.subarray(at)), 'asked', into);
      assert.deepEqual(outcome, { content: '{"reply":"café 😀"}', model: 'm-1' }, `split at byte ${at}`);
      assert.deepEqual(into.seen, { restarts: 1, pieces: ['{"reply":"caf', 'é 😀', '"}'] });
    }
  });

  it('an error event is a failure with its code, even after content', async () => {
    const body = `${delta('{"reply":"half')}${event({ error: { message: 'the upstream broke off', code: 'upstream_unreachable' } })}`;
    const outcome = await readStreamedAnswer(bytes(new TextEncoder().encode(body)), 'asked', receiver());
    assert.deepEqual(outcome, { failure: { code: 'upstream_unreachable', message: 'the upstream broke off' } });
  });

  it('a stream that ends without [DONE] is incomplete, never a whole answer', async () => {
    const outcome = await readStreamedAnswer(bytes(new TextEncoder().encode(delta('{"reply":"all of it"}'))), 'asked', receiver());
    assert.deepEqual(outcome, { failure: { code: 'incomplete_answer', message: 'the answer stream ended before [DONE]' } });
  });
});
