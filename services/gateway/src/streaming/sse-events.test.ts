import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SseEventSplitter } from './sse-events.ts';

const chunk = (content: string) => `data: {"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}],"usage":null}\n\n`;
const usageChunk = 'data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}\n\n';

describe('server-sent event splitting', () => {
  test('whole events come out as they complete, byte for byte, wherever the chunks are cut', () => {
    const text = `${chunk('Hello') + chunk(' wörld ✓') + usageChunk}data: [DONE]\n\n`;
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 7, 64, bytes.length]) {
      const splitter = new SseEventSplitter();
      const events = [];
      for (let at = 0; at < bytes.length; at += size) events.push(...splitter.push(bytes.subarray(at, at + size)));
      assert.equal(events.map((event) => event.raw).join(''), text, `chunks of ${size} bytes`);
      assert.equal(events.length, 4);
      assert.equal(splitter.rest(), '');
    }
  });

  test('usage is read only from the usage object; the usage-only chunk is told apart', () => {
    const [content, usage, done] = new SseEventSplitter().push(Buffer.from(`${chunk('x') + usageChunk}data: [DONE]\n\n`));
    assert.deepEqual([content?.usage, content?.usageOnly], [undefined, false]);
    assert.deepEqual([usage?.usage, usage?.usageOnly], [{ inputTokens: 12, outputTokens: 34 }, true]);
    assert.deepEqual([done?.usage, done?.error], [undefined, false]);
    const withContent = new SseEventSplitter().push(
      Buffer.from('data: {"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n'),
    )[0];
    assert.deepEqual([withContent?.usage, withContent?.usageOnly], [{ inputTokens: 1, outputTokens: 2 }, false], 'usage on a content chunk still counts');
  });

  test('CRLF line ends, comments, multi-line data and error events', () => {
    const events = new SseEventSplitter().push(
      Buffer.from(
        ': keep-alive\r\n\r\ndata: {"choices":[],\r\ndata: "usage":{"prompt_tokens":3,"completion_tokens":4}}\r\n\r\ndata: {"error":{"message":"boom"}}\n\n',
      ),
    );
    assert.equal(events.length, 3);
    assert.deepEqual(events[1]?.usage, { inputTokens: 3, outputTokens: 4 });
    assert.equal(events[2]?.error, true);
  });

  test('a malformed or negative usage is no usage at all', () => {
    const events = new SseEventSplitter().push(
      Buffer.from(
        'data: {"choices":[],"usage":{"prompt_tokens":-1,"completion_tokens":2}}\n\ndata: {"choices":[],"usage":{"prompt_tokens":1.5}}\n\ndata: {"usage":{"prompt_tokens":1,\n\n',
      ),
    );
    assert.deepEqual(
      events.map((event) => event.usage),
      [undefined, undefined, undefined],
    );
  });

  test('an unfinished event waits, and is handed back by rest()', () => {
    const splitter = new SseEventSplitter();
    assert.deepEqual(splitter.push(Buffer.from('data: {"partial"')), []);
    assert.equal(splitter.pendingChars, 16);
    assert.equal(splitter.rest(), 'data: {"partial"');
  });
});
