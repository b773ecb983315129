import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { relayedTraceHeaders, traceHeadersOf } from './trace-meta.ts';

const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('an MCP call’s _meta trace context: only a well-formed traceparent (and tracestate) is taken', () => {
  assert.deepEqual(traceHeadersOf({ traceparent, tracestate: 'vendor=a1', 'platform/confirm': {} }), { traceparent, tracestate: 'vendor=a1' });
  assert.deepEqual(traceHeadersOf({ traceparent, tracestate: 'bad\r\nx-injected: 1' }), { traceparent });
  for (const meta of [undefined, null, 'x', {}, { traceparent: 'x' }, { traceparent: `${traceparent}\r\nx-injected: 1` }, { traceparent: 7 }])
    assert.equal(traceHeadersOf(meta), undefined, JSON.stringify(meta));
});

test('relayedTraceHeaders: each call sends the trace headers its own _meta carried, overlapping calls included', async () => {
  const seen: (string | undefined)[] = [];
  const { port, close } = await listenOnFreePort(
    createServer((request, response) => {
      seen.push(request.headers.traceparent as string | undefined);
      response.end('{}');
    }),
  );
  const relay = relayedTraceHeaders();
  const other = traceparent.replace('00f067aa0ba902b7', '1111111111111111');
  try {
    const url = `http://127.0.0.1:${port}/`;
    await Promise.all([
      relay.run({ traceparent }, () => relay.fetch(url, { headers: { accept: 'application/json' } })),
      relay.run({ traceparent: other }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return relay.fetch(url);
      }),
      relay.run(undefined, () => relay.fetch(url)),
    ]);
    assert.deepEqual(new Set(seen), new Set([traceparent, other, undefined]));
  } finally {
    await close();
  }
});
