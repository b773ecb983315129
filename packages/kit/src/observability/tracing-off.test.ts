import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServiceApp } from '../http/create-app.ts';
import { createJsonClient } from '../http/json-client.ts';
import { createLogger } from '../logger.ts';
import { captureTraceContext, inSpan, noSpan, startTracing, traceCarrier, tracedFetch, tracingOff } from './tracing.ts';

/*
 * Tracing off, in a process where no service ever switched it on (node --test runs each file in its own process):
 * nothing is loaded, nothing is added to a request, a log line or a call.
 */

test('without an endpoint, with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none, tracing is off and the SDK is not loaded', async () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
  assert.equal(await startTracing({}, 'x'), tracingOff);
  assert.equal(await startTracing({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, 'x'), tracingOff);
  assert.equal(await startTracing({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, 'x'), tracingOff);
  // The API's registry of globals: no context manager, no propagator, no provider was installed.
  const globals = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[Symbol.for('opentelemetry.js.api.1')];
  assert.equal(globals?.context, undefined);
  assert.equal(globals?.propagation, undefined);
  assert.equal(globals?.trace, undefined);
});

test('off: no traceparent is added or passed on, spans only run their work, log lines carry no trace fields', async () => {
  const seen: Record<string, unknown>[] = [];
  const back = createServiceApp({ logger: createLogger({ level: 'silent', service: 'back' }), bodyLimit: 1024, api: undefined, tracing: tracingOff });
  back.get('/v1/headers', async (request) => {
    seen.push({ traceparent: request.headers.traceparent, tracestate: request.headers.tracestate });
    return { ok: true, data: null };
  });
  await back.listen({ host: '127.0.0.1', port: 0 });
  const backUrl = `http://127.0.0.1:${(back.server.address() as { port: number }).port}/v1/headers`;
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', service: 'front', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const front = createServiceApp({ logger, bodyLimit: 1024, api: undefined, tracing: tracingOff });
  const client = createJsonClient({ maxSockets: 2, timeoutMs: 5_000 });
  front.get('/v1/relay', async (request) => {
    request.log.info('relaying');
    await client.request('GET', backUrl);
    const span = await inSpan('work', {}, async (current) => {
      await tracedFetch(backUrl);
      return current;
    });
    return { ok: true, data: { noSpan: span === noSpan, carrier: traceCarrier() ?? null, captured: captureTraceContext() ?? null } };
  });
  try {
    const answer = await front.inject({ method: 'GET', url: '/v1/relay', headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    assert.deepEqual(answer.json(), { ok: true, data: { noSpan: true, carrier: null, captured: null } });
    assert.deepEqual(seen, [
      { traceparent: undefined, tracestate: undefined },
      { traceparent: undefined, tracestate: undefined },
    ]);
    const relaying = lines.find((line) => line.msg === 'relaying');
    assert.ok(relaying);
    assert.deepEqual(
      Object.keys(relaying).filter((key) => key.startsWith('trace') || key.startsWith('span')),
      [],
    );
    // No hook was added for tracing: the request decoration it makes is absent.
    assert.equal(front.hasRequestDecorator('traceContext'), false);
  } finally {
    await client.close();
    await front.close();
    await back.close();
  }
});
