import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { createServiceApp } from '../http/create-app.ts';
import { requireTransportBearer } from '../http/transport-bearer.ts';
import { childMetrics, summedMetrics } from './aggregate-metrics.ts';
import { boundedLabel, createServiceMetrics, setCounts } from './metrics.ts';

const token = 'metrics-secret-for-this-test';

function appWithMetrics(metricsToken: string) {
  const metrics = createServiceMetrics('test');
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' }, metrics, metricsToken });
  requireTransportBearer(app, { token: 'transport-token', publicPaths: ['/healthz'] });
  app.get('/v1/things/:id', async () => ({ ok: true, data: 'thing' }));
  return { app, metrics };
}

const scrape = (app: ReturnType<typeof appWithMetrics>['app'], authorization?: string) =>
  app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });

describe('GET /metrics', () => {
  it('answers 401 in the envelope without the metrics bearer or with a wrong one, the transport bearer included', async () => {
    const { app } = appWithMetrics(token);
    for (const authorization of [undefined, 'Bearer wrong', 'Bearer transport-token']) {
      const answer = await scrape(app, authorization);
      assert.equal(answer.statusCode, 401, `with ${authorization}`);
      assert.equal(answer.json().error.code, 'unauthorized');
      assert.doesNotMatch(answer.body, new RegExp(token));
    }
  });

  it('is not served when no metrics token is set', async () => {
    const { app } = appWithMetrics('');
    // Like any path no route serves: behind the transport bearer, then 404.
    assert.equal((await scrape(app, `Bearer ${token}`)).statusCode, 401);
    assert.equal((await scrape(app, 'Bearer transport-token')).statusCode, 404);
  });

  it('counts requests by method, route template and status class, never the raw URL, with latency and the process metrics', async () => {
    const { app } = appWithMetrics(token);
    const auth = { authorization: 'Bearer transport-token' };
    await app.inject({ method: 'GET', url: '/v1/things/did:key:z6MkSecretUser', headers: auth });
    await app.inject({ method: 'GET', url: '/v1/things/did:key:z6MkOther', headers: auth });
    await app.inject({ method: 'GET', url: '/v1/things/x' });
    await app.inject({ method: 'GET', url: '/no/such/path/did:key:z6MkThird', headers: auth });
    const answer = await scrape(app, `Bearer ${token}`);
    assert.equal(answer.statusCode, 200);
    assert.match(answer.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/);
    const text = answer.body;
    assert.match(text, /^http_requests_total\{method="GET",route="\/v1\/things\/:id",status_class="2xx"\} 2$/m);
    assert.match(text, /^http_requests_total\{method="GET",route="\/v1\/things\/:id",status_class="4xx"\} 1$/m);
    assert.match(text, /^http_requests_total\{method="GET",route="unmatched",status_class="4xx"\} 1$/m);
    assert.match(text, /^http_request_duration_seconds_count\{method="GET",route="\/v1\/things\/:id",status_class="2xx"\} 2$/m);
    assert.match(text, /^http_requests_in_flight 1$/m, 'the scrape itself is in flight');
    assert.doesNotMatch(text, /did:key/);
    for (const processMetric of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_gc_duration_seconds'])
      assert.match(text, new RegExp(`^# TYPE ${processMetric} `, 'm'), processMetric);
  });
});

describe('metric names and labels', () => {
  it("refuses a metric that is not the service's own or the kit's", () => {
    const metrics = createServiceMetrics('scheduler');
    assert.throws(() => metrics.counter({ name: 'gateway_calls_total', help: 'x' }), /must start with scheduler_/);
    assert.throws(() => metrics.counter({ name: 'scheduler-fires', help: 'x' }), /snake_case/);
    const fires = metrics.counter({ name: 'scheduler_fires_total', help: 'x', labelNames: ['outcome'] });
    assert.equal(metrics.counter({ name: 'scheduler_fires_total', help: 'x', labelNames: ['outcome'] }), fires, 'made twice: the same metric');
  });

  it('folds a value outside its closed set into other', () => {
    const allowed = new Set(['GET', 'POST']);
    assert.equal(boundedLabel('POST', allowed), 'POST');
    assert.equal(boundedLabel('did:key:z6Mk', allowed), 'other');
  });
});

describe('gauges read at scrape time, and children summed by a parent', () => {
  it('a collect that fails keeps its last values, and /metrics still answers', async () => {
    const { app, metrics } = appWithMetrics(token);
    let failing = false;
    metrics.gauge({
      name: 'test_queue_length',
      help: 'x',
      collect() {
        if (failing) throw new Error('the database is down');
        this.set(7);
      },
    });
    assert.match((await scrape(app, `Bearer ${token}`)).body, /^test_queue_length 7$/m);
    failing = true;
    const answer = await scrape(app, `Bearer ${token}`);
    assert.equal(answer.statusCode, 200);
    assert.match(answer.body, /^test_queue_length 7$/m);
  });

  it('setCounts writes every value of the closed set, 0 for the ones without a count', async () => {
    const metrics = createServiceMetrics('test');
    const gauge = metrics.gauge<'state'>({ name: 'test_things', help: 'x', labelNames: ['state'] });
    setCounts(gauge, 'state', ['open', 'closed'], new Map([['open', 3]]));
    setCounts(gauge, 'state', ['open', 'closed'], new Map([['closed', 1]]));
    const text = await metrics.render();
    assert.match(text, /^test_things\{state="open"\} 0$/m);
    assert.match(text, /^test_things\{state="closed"\} 1$/m);
  });

  it('answers JSON when asked, which a parent sums over its children, keeping only the names it expects', async () => {
    const children = await Promise.all(
      [2, 3].map(async (calls) => {
        const { app, metrics } = appWithMetrics(token);
        metrics.counter({ name: 'test_calls_total', help: 'x' }).inc(calls);
        metrics.histogram({ name: 'test_wait_seconds', help: 'x' }).observe(calls / 1000);
        const answer = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
        assert.match(answer.headers['content-type'] as string, /^application\/json/);
        return answer.json();
      }),
    );
    const forged = [{ name: 'other_secret_total', help: 'x', type: 'counter', values: [{ value: 1, labels: { user: 'did:key:z6Mk' } }] }, { name: 'test_bad' }];
    const text = await summedMetrics([...children, forged].map((json) => childMetrics(json, ['test_', 'process_'])));
    assert.match(text, /^test_calls_total 5$/m);
    assert.match(text, /^test_wait_seconds_count 2$/m);
    assert.match(text, /^test_wait_seconds_bucket\{le="0.0025"\} 1$/m);
    assert.match(text, /^process_resident_memory_bytes \d+/m, 'summed over the children');
    assert.doesNotMatch(text, /other_secret_total|test_bad|did:key|process_start_time_seconds/);
    assert.deepEqual(childMetrics('not metrics', ['test_']), []);
  });
});

describe('metrics of other threads', () => {
  it('sums counters, histograms and gauges of other registries into the render, series by series', async () => {
    const main = createServiceMetrics('test');
    const other = createServiceMetrics('test');
    const requests = (metrics: typeof main) => metrics.counter<'route'>({ name: 'test_requests_total', help: 'requests', labelNames: ['route'] });
    const time = (metrics: typeof main) => metrics.histogram({ name: 'test_seconds', help: 'time', buckets: [1] });
    requests(main).inc({ route: '/a' }, 2);
    requests(other).inc({ route: '/a' }, 3);
    requests(other).inc({ route: '/b' });
    time(main).observe(0.5);
    time(other).observe(2);
    main.gauge({
      name: 'test_role',
      help: 'only here',
      collect: function () {
        this.set(1);
      },
    });
    main.addThreads(async () => [await other.registry.getMetricsAsJSON()]);
    main.addThreads(async () => {
      throw new Error('a thread that does not answer');
    });
    const text = await main.render();
    assert.match(text, /^test_requests_total\{route="\/a"\} 5$/m);
    assert.match(text, /^test_requests_total\{route="\/b"\} 1$/m);
    assert.match(text, /^test_seconds_bucket\{le="1"\} 1$/m);
    assert.match(text, /^test_seconds_count 2$/m);
    assert.match(text, /^test_role 1$/m, 'a gauge read at scrape time is read once');
    assert.match(text, /^# TYPE process_cpu_seconds_total counter$/m);
  });

  it('leaves out the requests of a route marked httpMetrics: false', async () => {
    const { app, metrics } = appWithMetrics(token);
    app.get('/relayed/*', { config: { httpMetrics: false } }, async () => ({ ok: true, data: 'elsewhere' }));
    await app.inject({ method: 'GET', url: '/relayed/x', headers: { authorization: 'Bearer transport-token' } });
    const text = await metrics.render();
    assert.doesNotMatch(text, /relayed/);
    assert.match(text, /^http_requests_in_flight 0$/m);
  });
});
