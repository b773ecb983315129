import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { context, createContextKey, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { describeSpans, type ReceivedSpan, spanKinds, startOtlpReceiver } from '@platform/testkit/otlp-receiver';
import { GroupCommit } from '../group-commit.ts';
import { createServiceApp, type ServiceApp } from '../http/create-app.ts';
import { createJsonClient } from '../http/json-client.ts';
import { createLogger } from '../logger.ts';
import { continueClientSpan, inSpan, type ServiceTracing, SpanKind, startClientSpan, startTracing, tracedFetch } from './tracing.ts';

/*
 * Tracing switched on (tracing-off.test.ts has it off, in a process of its own): two services in this process, as
 * under `platform up`, each with its own provider, exporting to a local OTLP receiver.
 */

const incomingTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
const incomingParent = '00f067aa0ba902b7';
const traceparentFormat = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/** A local OTLP receiver and one service's tracing exporting to it, with `env`'s settings besides. */
async function tracedService(service: string, env: Record<string, string> = {}) {
  const receiver = await startOtlpReceiver();
  const tracing = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...env }, service);
  return { receiver, tracing };
}

describe('tracing on: server spans, client spans and traceparent across two services of one process', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let front: ServiceTracing;
  let back: ServiceTracing;
  let frontApp: ServiceApp;
  let backApp: ServiceApp;
  let frontUrl: string;
  const lines: Record<string, unknown>[] = [];
  const seenByBack: (string | undefined)[] = [];

  before(async () => {
    receiver = await startOtlpReceiver();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '10' };
    front = await startTracing(env, 'front');
    back = await startTracing({ ...env, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test' }, 'back');
    const logger = createLogger({
      level: 'info',
      service: 'front',
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    backApp = createServiceApp({ logger: createLogger({ level: 'silent', service: 'back' }), bodyLimit: 1024, api: undefined, tracing: back });
    backApp.get('/v1/things/:id', async (request) => {
      seenByBack.push(request.headers.traceparent as string | undefined);
      return { ok: true, data: { id: (request.params as { id: string }).id } };
    });
    backApp.get('/v1/broken', async () => {
      throw new Error('a bug');
    });
    await backApp.listen({ host: '127.0.0.1', port: 0 });
    const backUrl = `http://127.0.0.1:${(backApp.server.address() as { port: number }).port}`;
    const client = createJsonClient({ maxSockets: 4, timeoutMs: 5_000 });
    frontApp = createServiceApp({ logger, bodyLimit: 1024, api: undefined, tracing: front });
    frontApp.post('/v1/relay', async (request) => {
      request.log.info('relaying');
      const answer = await client.request('GET', `${backUrl}/v1/things/7`, { body: undefined });
      // A span of the route's own, around a call through fetch.
      const fetched = await inSpan('look twice', { attributes: { 'platform.step': 'two' } }, async () => (await tracedFetch(`${backUrl}/v1/broken`)).status);
      return { ok: true, data: { status: answer.status, fetched } };
    });
    await frontApp.listen({ host: '127.0.0.1', port: 0 });
    frontUrl = `http://127.0.0.1:${(frontApp.server.address() as { port: number }).port}`;
    logger.info('outside any request');
  });

  after(async () => {
    await frontApp?.close();
    await backApp?.close();
    await receiver?.close();
  });

  test('an incoming traceparent is continued; every call carries the span that made it; log lines name the span', async () => {
    // A body that arrives after the headers, so the handler runs after the socket's callbacks delivered it.
    const answer = await slowBodyPost(`${frontUrl}/v1/relay`, { traceparent: `00-${incomingTrace}-${incomingParent}-01` }, ['{', '}']);
    assert.deepEqual(JSON.parse(answer), { ok: true, data: { status: 200, fetched: 500 } });
    // Shutdown exports what is buffered (serve's last step does the same).
    await front.shutdown();
    await back.shutdown();
    const spans = receiver.spans();
    const named = (service: string, name: string): ReceivedSpan => {
      const span = spans.find((candidate) => candidate.service === service && candidate.name === name);
      assert.ok(span, `no ${service} span ${name} in ${describeSpans(spans)}`);
      return span;
    };
    const server = named('front', 'POST /v1/relay');
    assert.deepEqual([server.traceId, server.parentSpanId, server.kind], [incomingTrace, incomingParent, spanKinds.server]);
    assert.equal(server.attributes['http.route'], '/v1/relay');
    assert.equal(server.attributes['http.response.status_code'], 200);

    // The JSON client's call: a client span under the server span, and the back service's span under that.
    const [call, second] = spans.filter((span) => span.service === 'front' && span.name === 'GET');
    assert.ok(call && second, describeSpans(spans));
    assert.deepEqual([call.parentSpanId, call.kind, call.attributes['http.response.status_code']], [server.spanId, spanKinds.client, 200]);
    const thing = named('back', 'GET /v1/things/:id');
    assert.deepEqual([thing.traceId, thing.parentSpanId, thing.attributes['url.path']], [incomingTrace, call.spanId, '/v1/things/7']);
    assert.equal(seenByBack[0], `00-${incomingTrace}-${call.spanId}-01`);
    assert.match(seenByBack[0] ?? '', traceparentFormat);

    // inSpan under the server span, fetch's client span under it, the failing route's server span under that: failed.
    const look = named('front', 'look twice');
    assert.deepEqual([look.parentSpanId, look.attributes['platform.step']], [server.spanId, 'two']);
    assert.deepEqual([second.parentSpanId, second.status, second.attributes['error.type']], [look.spanId, 2, '500']);
    const broken = named('back', 'GET /v1/broken');
    assert.deepEqual([broken.parentSpanId, broken.status], [second.spanId, 2]);

    // One provider per service: each service's spans arrive under its own service.name and resource.
    assert.deepEqual(new Set(spans.map((span) => span.service)), new Set(['front', 'back']));
    assert.deepEqual(receiver.refused(), []);

    const relaying = lines.find((line) => line.msg === 'relaying');
    assert.deepEqual([relaying?.trace_id, relaying?.span_id], [incomingTrace, server.spanId]);
    const outside = lines.find((line) => line.msg === 'outside any request');
    assert.ok(outside);
    assert.equal('trace_id' in outside, false);
    assert.equal('span_id' in outside, false);
  });
});

describe('tracing on: sampling and a request without a traceparent', () => {
  test('a request without a traceparent starts a trace; an unsampled one is passed on unsampled and records nothing', async () => {
    const { receiver, tracing } = await tracedService('solo');
    const app = createServiceApp({ logger: createLogger({ level: 'silent', service: 'solo' }), bodyLimit: 1024, api: undefined, tracing });
    const passedOn: Record<string, unknown>[] = [];
    app.get('/v1/ping', async () => {
      const headers: Record<string, string> = {};
      const { startClientSpan } = await import('./tracing.ts');
      startClientSpan('GET', 'http://127.0.0.1:1/nowhere', headers).end(204);
      passedOn.push(headers);
      return { ok: true, data: 'pong' };
    });
    try {
      assert.equal((await app.inject({ method: 'GET', url: '/v1/ping' })).statusCode, 200);
      const unsampled = `00-${incomingTrace}-${incomingParent}-00`;
      assert.equal((await app.inject({ method: 'GET', url: '/v1/ping', headers: { traceparent: unsampled } })).statusCode, 200);
      await tracing.shutdown();
      const [fresh, quiet] = passedOn as { traceparent: string }[];
      assert.match(fresh?.traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      assert.notEqual(fresh?.traceparent.split('-')[1], incomingTrace);
      assert.match(quiet?.traceparent ?? '', new RegExp(`^00-${incomingTrace}-[0-9a-f]{16}-00$`));
      const spans = receiver.spans();
      assert.equal(
        spans.some((span) => span.traceId === incomingTrace),
        false,
        'the unsampled trace recorded nothing',
      );
      const root = spans.find((span) => span.name === 'GET /v1/ping');
      assert.equal(root?.parentSpanId, undefined);
    } finally {
      await app.close();
      await receiver.close();
    }
  });
});

describe('tracing on: the work of an unsampled request', () => {
  test('spans under an unrecorded span build no attributes and record nothing, and every call passes the one trace on unsampled', async () => {
    // Every trace this service starts is unsampled (a ratio of 0), as nine in ten are at a ratio of 0.1.
    const { receiver, tracing } = await tracedService('quiet', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
    const app = createServiceApp({ logger: createLogger({ level: 'silent', service: 'quiet' }), bodyLimit: 1024, api: undefined, tracing });
    let attributesBuilt = 0;
    const passedOn: string[] = [];
    const mark = createContextKey('test.mark');
    app.get('/v1/work', async () => {
      const seen = await inSpan('step', { attributes: () => ({ 'platform.step': String(++attributesBuilt) }) }, async (span) => {
        assert.equal(span.isRecording(), false);
        // Values set by other code in the span's context are read through it, and a deleted one is gone.
        const marked = context.active().setValue(mark, 'here');
        assert.equal(marked.getValue(mark), 'here');
        assert.equal(marked.deleteValue(mark).getValue(mark), undefined);
        for (const target of ['http://127.0.0.1:1/a', 'http://127.0.0.1:1/b']) {
          const headers: Record<string, string> = {};
          const call = context.with(marked, () => startClientSpan('GET', target, headers));
          call.end(200);
          passedOn.push(headers.traceparent as string);
        }
        return context.with(marked, () => inSpan('inner', {}, () => context.active().getValue(mark)));
      });
      // A child's throw, synchronous or not, reaches its caller as the span's rejection.
      await assert.rejects(
        inSpan('failing', {}, () => {
          throw new Error('failed at once');
        }),
        /failed at once/,
      );
      await assert.rejects(
        inSpan('failing later', {}, async () => Promise.reject(new Error('failed later'))),
        /failed later/,
      );
      return { ok: true, data: seen };
    });
    try {
      const answer = await app.inject({ method: 'GET', url: '/v1/work' });
      assert.deepEqual(answer.json(), { ok: true, data: 'here' });
      await tracing.shutdown();
      assert.equal(attributesBuilt, 0, 'no attributes built for spans that are not recorded');
      assert.equal(passedOn.length, 2);
      const [first, second] = passedOn.map((traceparent) => traceparentFormat.exec(traceparent));
      assert.ok(first && second, `traceparents: ${passedOn.join(', ')}`);
      assert.equal(first[1], second[1], 'one trace');
      assert.ok(
        passedOn.every((traceparent) => traceparent.endsWith('-00')),
        'passed on unsampled',
      );
      assert.equal(receiver.spans().length, 0);
    } finally {
      await app.close();
      await receiver.close();
    }
  });

  test('a sampled span builds its attributes once, and its children are recorded under it', async () => {
    const { receiver, tracing } = await tracedService('loud');
    let attributesBuilt = 0;
    try {
      await inSpan('outside', {}, () => undefined); // no span of this service is active: only runs the work
      await tracing.span('outer', { attributes: () => ({ 'platform.step': String(++attributesBuilt) }) }, () =>
        inSpan('inner', { attributes: { 'platform.inner': true } }, async () => {
          throw new Error('inner failed');
        }).catch(() => 'handled'),
      );
      await tracing.shutdown();
      assert.equal(attributesBuilt, 1);
      const spans = receiver.spans();
      const outer = spans.find((span) => span.name === 'outer');
      const inner = spans.find((span) => span.name === 'inner');
      assert.equal(outer?.attributes['platform.step'], '1');
      assert.equal(inner?.parentSpanId, outer?.spanId);
      assert.equal(inner?.attributes['platform.inner'], true);
      assert.equal(inner?.attributes['error.type'], 'Error');
      assert.equal(
        spans.some((span) => span.name === 'outside'),
        false,
      );
    } finally {
      await receiver.close();
    }
  });
});

describe('a batch carrying the items of several traces', () => {
  test("its span is in the first sampled item's trace, linked to the other sampled ones', and what it calls is under it; untraced batches add no span", async () => {
    const { receiver, tracing } = await tracedService('batcher');
    const sent: number[][] = [];
    const traced = new GroupCommit(
      (items: number[]) =>
        inSpan('send items', {}, async () => {
          sent.push(items);
          return items.map((item) => item * 10);
        }),
      { maxBatch: 16, maxInFlight: 4, span: 'settlement hold batch' },
    );
    const plain = new GroupCommit(async (items: number[]) => items, { maxBatch: 16, maxInFlight: 4 });
    try {
      // First in the batch, an item of a trace its caller did not sample: the batch goes under the first sampled one.
      const unsampled = trace.setSpanContext(ROOT_CONTEXT, { traceId: incomingTrace, spanId: incomingParent, traceFlags: 0, isRemote: true });
      const answers = await Promise.all([
        context.with(unsampled, () => traced.submit(0)),
        tracing.span('call a', { root: true }, () => traced.submit(1)),
        tracing.span('call b', { root: true }, () => traced.submit(2)),
        tracing.span('call c', { root: true }, () => traced.submit(3)),
        tracing.span('call d', { root: true }, () => plain.submit(4)),
      ]);
      assert.deepEqual(answers, [0, 10, 20, 30, 4]);
      assert.deepEqual(sent, [[0, 1, 2, 3]], 'one batch');
      await tracing.shutdown();
      const spans = receiver.spans();
      const named = (name: string) => spans.find((span) => span.name === name) as ReceivedSpan;
      const [a, b, c, batch, inner] = ['call a', 'call b', 'call c', 'settlement hold batch', 'send items'].map(named) as ReceivedSpan[];
      assert.ok(a && b && c && batch && inner, describeSpans(spans));
      assert.equal(batch.traceId, a.traceId);
      assert.equal(batch.parentSpanId, a.spanId);
      assert.equal(batch.attributes['platform.batch.items'], 4);
      assert.deepEqual(batch.links.map((link) => link.spanId).sort(), [b.spanId, c.spanId].sort());
      assert.notEqual(b.traceId, a.traceId);
      assert.equal(inner.parentSpanId, batch.spanId);
      assert.equal(spans.filter((span) => span.name.endsWith('batch')).length, 1, 'the untraced GroupCommit added no span');
    } finally {
      await receiver.close();
    }
  });
});

describe("a model call span that is its HTTP call's client span", () => {
  test('the upstream gets the model call span as its parent; its server and a refusal are on that span, and no span is added', async () => {
    const { receiver, tracing } = await tracedService('calling');
    const sent: Record<string, unknown>[] = [];
    try {
      const outside: Record<string, unknown> = {};
      continueClientSpan(new URL('http://127.0.0.1:9/v1'), outside).end(200);
      assert.deepEqual(outside, {}, 'outside any span it writes nothing');
      for (const status of [200, 429])
        await tracing.span(`chat m${status}`, { kind: SpanKind.CLIENT }, async () => {
          const headers: Record<string, unknown> = {};
          const call = continueClientSpan(new URL('https://models.example:8443/v1'), headers);
          call.end(status);
          call.end(500);
          sent.push(headers);
        });
      await tracing.shutdown();
      const spans = receiver.spans();
      assert.deepEqual(
        spans.map((span) => span.name),
        ['chat m200', 'chat m429'],
      );
      for (const [i, span] of spans.entries()) {
        assert.equal(sent[i]?.traceparent, `00-${span.traceId}-${span.spanId}-01`);
        assert.deepEqual([span.attributes['server.address'], span.attributes['server.port']], ['models.example', 8443]);
      }
      assert.deepEqual(
        spans.map((span) => [span.attributes['http.response.status_code'], span.status, span.attributes['error.type']]),
        [
          [200, 0, undefined],
          [429, 2, '429'],
        ],
        'the first end counts; a refusal fails the span',
      );
    } finally {
      await receiver.close();
    }
  });
});

describe('the two OTLP encodings, read by a test collector and counted by a bench one', () => {
  for (const protocol of ['http/protobuf', 'http/json'])
    test(`${protocol}: the spans arrive whole, and a counting receiver counts exactly them`, async () => {
      const keeping = await startOtlpReceiver();
      const counting = await startOtlpReceiver({ keep: false });
      const receivers = [keeping, counting];
      const services = await Promise.all(
        receivers.map((receiver) => startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }, 'counted')),
      );
      try {
        for (const tracing of services)
          for (let i = 0; i < 7; i++)
            await tracing.span(`work ${i}`, { attributes: { kind: 'a value named kind', 'step.kind': i, ratio: 0.5, done: true } }, async (span) => {
              span.addEvent('kind', { kind: 'an event' });
              await inSpan('inner', { kind: SpanKind.CLIENT }, () => undefined);
            });
        await Promise.all(services.map((tracing) => tracing.shutdown()));
        const encoding = protocol === 'http/json' ? 'json' : 'protobuf';
        for (const receiver of receivers) assert.deepEqual(receiver.encodings(), { [encoding]: 1 });
        const spans = keeping.spans();
        assert.deepEqual([spans.length, keeping.received(), counting.received(), counting.spans().length], [14, 14, 14, 0]);
        const outer = spans.find((span) => span.name === 'work 3');
        const inner = spans.find((span) => span.name === 'inner' && span.parentSpanId === outer?.spanId);
        assert.deepEqual(outer?.attributes, { kind: 'a value named kind', 'step.kind': 3, ratio: 0.5, done: true });
        assert.deepEqual([outer?.service, outer?.kind, outer?.parentSpanId, inner?.kind, inner?.traceId], ['counted', 1, undefined, 3, outer?.traceId]);
        assert.match(outer?.traceId ?? '', /^[0-9a-f]{32}$/);
      } finally {
        await Promise.all(receivers.map((receiver) => receiver.close()));
      }
    });
});

/** A JSON POST whose body is written in parts, each after the server has seen the one before (as a slow client sends it). */
async function slowBodyPost(url: string, headers: Record<string, string>, parts: string[]): Promise<string> {
  const { promise, resolve, reject } = Promise.withResolvers<string>();
  const request = httpRequest(
    url,
    { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
    (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve(text));
    },
  );
  request.on('error', reject);
  request.flushHeaders();
  for (const part of parts) {
    await new Promise((done) => setTimeout(done, 50));
    request.write(part);
  }
  request.end();
  return promise;
}
