import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReplyScanner } from './reply-scanner.ts';

const documents: { name: string; content: string; reply: string }[] = [
  { name: 'plain, reply first', content: '{"reply":"Hello there","task":null,"remember":[]}', reply: 'Hello there' },
  {
    name: 'every escape',
    content: String.raw`{"reply": "quote \" slash \\ solidus \/ b\b f\f n\n r\r t\t e\u00e9 E\u00C9", "task": null}`,
    reply: 'quote " slash \\ solidus / b\b f\f n\n r\r t\t eé EÉ',
  },
  { name: 'an escaped surrogate pair', content: String.raw`{"reply":"smile \ud83d\ude00 done","task":null}`, reply: 'smile 😀 done' },
  { name: 'raw astral characters', content: '{"reply":"raw 😀 and ✓ and 𝄞","task":null}', reply: 'raw 😀 and ✓ and 𝄞' },
  {
    name: 'reply last, after members that say "reply"',
    content: '{ "task" : "reply", "remember" : ["reply", {"reply": "no"}], "reply" : "the real one" }',
    reply: 'the real one',
  },
  {
    name: 'a nested object with a reply key before the real one',
    content: '{"task":{"reply":"wrong","deeper":[{"reply":"wronger"}]},"reply":"right \\"one\\"","remember":[]}',
    reply: 'right "one"',
  },
  { name: 'a fenced answer', content: '```json\n{\n  "reply": "fenced\\nanswer",\n  "task": null,\n  "remember": []\n}\n```', reply: 'fenced\nanswer' },
  { name: 'prose before the object', content: 'Here it is: {"remember":[],"reply":"after prose","task":null}', reply: 'after prose' },
  { name: 'an escaped key', content: String.raw`{"\u0072eply":"escaped key","task":null}`, reply: 'escaped key' },
  { name: 'an empty reply', content: '{"reply":"","task":null,"remember":[]}', reply: '' },
];

/** Asserts what a person could be shown at any moment is the start of the final reply, and the end is all of it. */
function assertStreams(content: string, reply: string, pieces: string[]): void {
  const scanner = new ReplyScanner('reply');
  let shown = '';
  for (const piece of pieces) {
    scanner.push(piece);
    assert.ok(reply.startsWith(scanner.text), `${JSON.stringify(scanner.text)} is not the start of ${JSON.stringify(reply)} (${JSON.stringify(pieces)})`);
    assert.ok(scanner.text.length >= shown.length, 'the text never shrinks');
    shown = scanner.text;
  }
  assert.equal(scanner.text, reply, `pieces ${JSON.stringify(pieces)} of ${content}`);
  assert.equal(scanner.found, true);
}

describe('reading the reply out of a streamed JSON answer', () => {
  for (const { name, content, reply } of documents) {
    it(`${name}: split at every position, and one character at a time`, () => {
      assert.equal((JSON.parse(content.replace(/^[^{]*|[^}]*$/g, '')) as { reply: string }).reply, reply, 'the fixture is what JSON.parse reads');
      for (let at = 0; at <= content.length; at++) assertStreams(content, reply, [content.slice(0, at), content.slice(at)]);
      assertStreams(content, reply, [...content.split('')]);
    });
  }

  it('splits three ways around every escape', () => {
    const content = String.raw`{"reply":"\u00e9\n\ud83d\ude00\\\""}`;
    for (let first = 0; first <= content.length; first++)
      for (let second = first; second <= content.length; second++)
        assertStreams(content, 'é\n😀\\"', [content.slice(0, first), content.slice(first, second), content.slice(second)]);
  });

  it('holds a lone high surrogate back until its pair arrives', () => {
    const scanner = new ReplyScanner('reply');
    scanner.push(String.raw`{"reply":"a\ud83d`);
    assert.equal(scanner.text, 'a');
    scanner.push(String.raw`\ude00"}`);
    assert.equal(scanner.text, 'a😀');
  });

  const scanned = (content: string) => {
    const scanner = new ReplyScanner('reply');
    scanner.push(content);
    return { found: scanner.found, text: scanner.text };
  };

  it('never shows a nested reply, and shows nothing when the answer has no reply', () => {
    assert.deepEqual(scanned('{"task":{"reply":"not this"},"remember":["reply"]}'), { found: false, text: '' });
  });

  it('keeps the last of a repeated member, as JSON.parse does', () => {
    assert.equal(scanned('{"reply":"first","reply":"second"}').text, 'second');
  });

  it('stops at the end of the first object', () => {
    assert.equal(scanned('{"reply":"one"} {"reply":"two"}').text, 'one');
  });

  it('reads no text from a reply that is not a string', () => {
    assert.deepEqual(scanned('{"reply":null,"task":"x"}'), { found: false, text: '' });
  });
});
