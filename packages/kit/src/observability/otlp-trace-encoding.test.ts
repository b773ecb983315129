import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Attributes, context, type Link, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { seededRandom } from '@platform/testkit/seeded-random';
import { encodeTraceExportRequest } from './otlp-trace-encoding.ts';

/*
 * Our encoder against the SDK's ProtobufTraceSerializer, byte for byte, over spans made by the SDK itself: every
 * field a span can carry, every attribute type, strings around the one-byte length (42 UTF-16 units, 127 bytes),
 * UTF-8 of one to four bytes and lone surrogates, lengths of two and three bytes, several resources and scopes.
 */

const remoteParent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true };

function recorder(resource: Attributes) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    spanLimits: { attributeCountLimit: 8, eventCountLimit: 3, linkCountLimit: 2 },
  });
  return { exporter, provider };
}

const sdkBytes = (spans: ReadableSpan[]) => Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);

/** Our request of `spans` is the SDK's, byte for byte. */
const same = (spans: ReadableSpan[]) => assert.deepEqual(Buffer.from(encodeTraceExportRequest(spans)), sdkBytes(spans));

describe('OTLP/protobuf trace encoding', () => {
  test('a span with every field: the bytes the SDK writes', () => {
    const { exporter, provider } = recorder({ 'service.name': 'gateway', 'service.instance.id': 'é-1', 'process.pid': 4242 });
    const tracer = provider.getTracer('@platform/gateway', '1.2.3');
    const links: Link[] = [
      { context: { ...remoteParent, traceState: new TraceState('vendor=a,other=b') }, attributes: { why: 'batched' } },
      { context: { traceId: 'ABCDEF0123456789abcdef0123456789', spanId: '1234567890ABCDEF', traceFlags: TraceFlags.NONE } },
      { context: { traceId: remoteParent.traceId, spanId: '0000000000000001', traceFlags: 1 } },
    ];
    const parent = trace.setSpanContext(ROOT_CONTEXT, { ...remoteParent, traceState: new TraceState('congo=t61rcWkgMzE') });
    const span = tracer.startSpan('POST /v1/chat/completions', { kind: SpanKind.SERVER, links, startTime: [1_765_000_000, 999_999_999] }, parent);
    span.setAttributes({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'gen_ai.usage.input_tokens': 2 ** 40,
      negative: -5,
      'very negative': -(2 ** 60),
      ratio: 0.25,
      'not a number': Number.NaN,
      ok: true,
      'many kinds': ['a', 'ü', '', 'x'.repeat(200)],
      counts: [1, 2, 3],
      flags: [true, false],
      'over the limit': 'dropped',
    });
    span.addEvent('first', { at: 1, 'where it was': 'ünïcode ✓ 𝄞' }, [1_765_000_001, 5]);
    span.addEvent('second');
    span.addEvent('third', {}, [1_765_000_002, 0]);
    span.addEvent('fourth is dropped');
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream 502: '.padEnd(300, '.') });
    span.end([1_765_000_003, 1]);
    same(exporter.getFinishedSpans());
  });

  test('strings at and around the one-byte length, in each width of UTF-8, and lone surrogates', () => {
    const { exporter, provider } = recorder({ 'service.name': 's' });
    const tracer = provider.getTracer('t');
    const widths = ['a', 'é', '✓', '𝄞', '\ud800', '\udc00x'];
    for (const unit of widths)
      for (const length of [0, 1, 41, 42, 43, 63, 64, 127, 128, 129, 16_383, 16_384]) {
        const value = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
        tracer.startSpan(value, { attributes: { [value || 'empty']: value } }).end();
      }
    same(exporter.getFinishedSpans());
  });

  test('a batch of many spans over two resources and three scopes, with children and a remote parent', () => {
    const random = seededRandom(7);
    const first = recorder({ 'service.name': 'router' });
    const second = recorder({ 'service.name': 'daemon', 'deployment.environment.name': 'test' });
    const tracers = [first.provider.getTracer('a'), first.provider.getTracer('b', '0.1.0'), second.provider.getTracer('c')];
    for (let i = 0; i < 600; i++) {
      const tracer = tracers[Math.floor(random() * tracers.length)] as (typeof tracers)[number];
      const parent = random() < 0.3 ? trace.setSpanContext(ROOT_CONTEXT, remoteParent) : context.active();
      const outer = tracer.startSpan(
        `op ${i}`,
        { kind: Math.floor(random() * 5) as SpanKind, attributes: { i, word: 'w'.repeat(Math.floor(random() * 60)) } },
        parent,
      );
      const inner = tracer.startSpan(`inner ${i}`, {}, trace.setSpan(ROOT_CONTEXT, outer));
      inner.setStatus({ code: SpanStatusCode.OK });
      inner.end();
      outer.end();
    }
    const spans = [...first.exporter.getFinishedSpans(), ...second.exporter.getFinishedSpans()].sort(() => random() - 0.5);
    assert.equal(spans.length, 1_200);
    same(spans);
    // A second batch after a large one: the kept buffer holds nothing of the first.
    same(spans.slice(0, 3));
    same([]);
    // One span larger than the buffer kept between batches (64 KiB), which grows keeping what was written before it,
    // and one past the bound on what is kept (1 MiB); the batches after each are written right.
    for (const size of [200_000, 3_000_000]) {
      first.provider
        .getTracer('a')
        .startSpan('huge', { attributes: { body: 'h'.repeat(size) } })
        .end();
      same([...spans.slice(0, 100), ...first.exporter.getFinishedSpans().slice(-1), ...spans.slice(100, 200)]);
      same(spans.slice(0, 50));
    }
  });
});
