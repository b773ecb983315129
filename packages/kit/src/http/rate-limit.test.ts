import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '@platform/testkit/manual-clock';
import pino from 'pino';
import { createServiceApp } from './create-app.ts';
import { type BucketRate, chargeForItems, localBuckets, parseBucketRate, rateLimit, type TakeToken, TokenBuckets } from './rate-limit.ts';

/** Takes `count` tokens of `key` and returns how many were allowed. */
function takeMany(buckets: TokenBuckets, key: string, count: number): number {
  let allowed = 0;
  for (let i = 0; i < count; i++) if (buckets.take(key).allowed) allowed++;
  return allowed;
}

describe('TokenBuckets', () => {
  it('allows the burst and refuses exactly the next request', () => {
    const buckets = new TokenBuckets({ rate: { perSecond: 1, burst: 5 }, clock: new ManualClock() });
    assert.equal(takeMany(buckets, 'a', 5), 5);
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
  });

  it('says how many whole seconds until a token is available, for fractional rates too', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 0.5, burst: 1 }, clock });
    assert.deepEqual(buckets.take('a'), { allowed: true });
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 2 });
    clock.advance(500); // 1.5 s to go: rounds up
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 2 });
    clock.advance(1000);
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
    clock.advance(499);
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
    clock.advance(1);
    assert.deepEqual(buckets.take('a'), { allowed: true });

    const slow = new TokenBuckets({ rate: { perSecond: 0.1, burst: 1 }, clock });
    slow.take('a');
    assert.deepEqual(slow.take('a'), { allowed: false, retryAfterSeconds: 10 });
  });

  it('never says less than one second, even when a token is a few milliseconds away', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 100, burst: 1 }, clock });
    buckets.take('a');
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
  });

  it('refills with time, but never beyond the burst', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 10, burst: 5 }, clock });
    assert.equal(takeMany(buckets, 'a', 6), 5);
    clock.advance(100);
    assert.equal(takeMany(buckets, 'a', 2), 1);
    clock.advance(60_000);
    assert.equal(takeMany(buckets, 'a', 6), 5);
  });

  it('takes several tokens at once, all or none', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 1, burst: 5 }, clock });
    assert.deepEqual(buckets.take('a', 3), { allowed: true });
    assert.deepEqual(buckets.take('a', 3), { allowed: false, retryAfterSeconds: 1 }, 'two left: none taken');
    assert.deepEqual(buckets.take('a', 2), { allowed: true });
    assert.deepEqual(buckets.take('a', 9), { allowed: false, retryAfterSeconds: 5 }, 'more than the burst: a full bucket');
    clock.advance(5000);
    assert.deepEqual(buckets.take('a', 9), { allowed: true });
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
  });

  it('keeps separate keys independent', () => {
    const buckets = new TokenBuckets({ rate: { perSecond: 1, burst: 2 }, clock: new ManualClock() });
    assert.equal(takeMany(buckets, 'a', 3), 2);
    assert.equal(takeMany(buckets, 'b', 3), 2);
    assert.equal(buckets.take('a').allowed, false);
  });

  it('neither drains nor credits a bucket when the clock steps backwards', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 1, burst: 1 }, clock });
    buckets.take('a');
    clock.advance(-10_000);
    assert.deepEqual(buckets.take('a'), { allowed: false, retryAfterSeconds: 1 });
    clock.advance(1000);
    assert.equal(buckets.take('a').allowed, true);
  });

  it('refuses rates it cannot honour', () => {
    const clock = new ManualClock();
    for (const rate of [
      { perSecond: 0, burst: 1 },
      { perSecond: 1, burst: 0 },
      { perSecond: 1, burst: 1.5 },
      { perSecond: Number.NaN, burst: 1 },
    ]) {
      assert.throws(() => new TokenBuckets({ rate, clock }), /invalid bucket rate/);
    }
  });
});

describe('TokenBuckets memory bound', () => {
  it('never tracks more than maxKeys keys, however many addresses call', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 1, burst: 2 }, clock, maxKeys: 10 });
    for (let i = 0; i < 1000; i++) {
      buckets.take(`key-${i}`);
      assert.ok(buckets.size <= 10, `size ${buckets.size} after ${i + 1} keys`);
      if (i % 7 === 0) clock.advance(300);
    }
    // The most recent caller is still limited.
    assert.equal(takeMany(buckets, 'key-999', 2), 1);
  });

  it('drops full buckets before anything else, and a dropped key starts again full', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 1, burst: 2 }, clock, maxKeys: 3 });
    assert.equal(takeMany(buckets, 'older', 2), 2); // empty
    clock.advance(1);
    assert.equal(takeMany(buckets, 'full', 1), 1); // one left
    clock.advance(1000);
    // Now `older` holds one token (not full) and `full` is back at two, although it was used more recently.
    assert.equal(takeMany(buckets, 'b', 1), 1);
    assert.equal(buckets.size, 3);
    assert.equal(takeMany(buckets, 'c', 1), 1);
    assert.equal(buckets.size, 3);
    // `older` kept its state: one token, then refused. Had it been dropped it would allow two.
    assert.equal(takeMany(buckets, 'older', 2), 1);
    // `full` was dropped and behaves as a fresh full bucket.
    assert.equal(takeMany(buckets, 'full', 3), 2);
  });

  it('drops the least recently used buckets when none is full', () => {
    const clock = new ManualClock();
    const buckets = new TokenBuckets({ rate: { perSecond: 1, burst: 2 }, clock, maxKeys: 3 });
    buckets.take('a');
    buckets.take('b');
    buckets.take('c');
    buckets.take('a'); // `a` is now the most recently used, `b` the least
    buckets.take('d');
    assert.equal(buckets.size, 3);
    assert.equal(takeMany(buckets, 'a', 1), 0); // kept, empty
    assert.equal(takeMany(buckets, 'b', 3), 2); // forgotten, fresh
  });
});

describe('rateLimit', () => {
  const classes: Record<'read' | 'write', BucketRate> = { read: { perSecond: 1, burst: 3 }, write: { perSecond: 0.5, burst: 2 } };

  function appWith(clock: ManualClock, take?: TakeToken) {
    const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
    rateLimit(app, {
      classes,
      ...(take ? { take } : {}),
      classify: (request) => {
        const url = request.routeOptions.url ?? '';
        if (url.startsWith('/v1/explorer')) return 'read';
        if (url.startsWith('/v1/pay')) return 'write';
        return undefined;
      },
      clock,
    });
    // Stands in for the auth hooks a service adds afterwards; a refused request must never reach it.
    const reached = { count: 0 };
    app.addHook('onRequest', async () => {
      reached.count++;
    });
    app.get('/v1/explorer', async () => ({ ok: true, data: {} }));
    app.post('/v1/pay', async () => ({ ok: true, data: {} }));
    app.get('/healthz', async () => ({ ok: true, data: {} }));
    return { app, reached };
  }

  it('answers 429 rate_limited with Retry-After once the burst is spent, before later hooks run', async () => {
    const clock = new ManualClock();
    const { app, reached } = appWith(clock);
    for (let i = 0; i < 2; i++) assert.equal((await app.inject({ method: 'POST', url: '/v1/pay' })).statusCode, 200);
    const limited = await app.inject({ method: 'POST', url: '/v1/pay' });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '2');
    assert.deepEqual(limited.json(), {
      ok: false,
      error: { code: 'rate_limited', message: 'too many write requests from this address; retry after 2 s', retryable: true },
    });
    assert.equal(reached.count, 2);
    clock.advance(2000);
    assert.equal((await app.inject({ method: 'POST', url: '/v1/pay' })).statusCode, 200);
  });

  it('charges a request for the items its body asks for, after the one its arrival took', async () => {
    const clock = new ManualClock();
    const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
    rateLimit(app, { classes: { write: { perSecond: 0.5, burst: 4 } }, classify: () => 'write', clock });
    app.post('/v1/batch', { schema: { body: { type: 'object', properties: { items: { type: 'integer' } } } } }, async (request) => {
      await chargeForItems(request, (request.body as { items: number }).items);
      return { ok: true, data: {} };
    });
    const batch = (items: number) => app.inject({ method: 'POST', url: '/v1/batch', payload: { items } });
    const tooMany = await batch(5);
    assert.equal(tooMany.statusCode, 429);
    assert.equal(tooMany.headers['retry-after'], '2');
    assert.equal((await batch(3)).statusCode, 200, 'the refused batch spent only its arrival’s token');
    assert.equal((await batch(1)).statusCode, 429);
  });

  it('keeps classes independent: spending write leaves read untouched', async () => {
    const { app } = appWith(new ManualClock());
    for (let i = 0; i < 3; i++) await app.inject({ method: 'POST', url: '/v1/pay' });
    assert.equal((await app.inject({ method: 'POST', url: '/v1/pay' })).statusCode, 429);
    const reads = await Promise.all(Array.from({ length: 4 }, () => app.inject({ method: 'GET', url: '/v1/explorer' })));
    assert.deepEqual(
      reads.map((response) => response.statusCode),
      [200, 200, 200, 429],
    );
  });

  it('never limits unclassified routes, unknown routes included', async () => {
    const { app } = appWith(new ManualClock());
    for (let i = 0; i < 50; i++) {
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      assert.equal((await app.inject({ method: 'GET', url: '/nowhere' })).statusCode, 404);
    }
  });

  it('keeps client addresses independent', async () => {
    const { app } = appWith(new ManualClock());
    const pay = (remoteAddress: string) => app.inject({ method: 'POST', url: '/v1/pay', remoteAddress });
    for (let i = 0; i < 2; i++) assert.equal((await pay('203.0.113.1')).statusCode, 200);
    assert.equal((await pay('203.0.113.1')).statusCode, 429);
    assert.equal((await pay('203.0.113.2')).statusCode, 200);
    assert.equal((await pay('2001:db8::1')).statusCode, 200);
  });

  it('ignores X-Forwarded-For unless the app trusts a proxy', async () => {
    const { app } = appWith(new ManualClock());
    const pay = (forwardedFor: string) => app.inject({ method: 'POST', url: '/v1/pay', headers: { 'x-forwarded-for': forwardedFor } });
    await pay('198.51.100.1');
    await pay('198.51.100.2');
    assert.equal((await pay('198.51.100.3')).statusCode, 429);
  });

  it('takes from buckets kept elsewhere when given them: two apps on one set share each address’s limit', async () => {
    const clock = new ManualClock();
    const shared = localBuckets(classes, clock);
    // As from another thread: the answer arrives later, as a promise.
    const remote: TakeToken = async (className, key) => shared(className, key);
    const one = appWith(clock, remote).app;
    const two = appWith(clock, remote).app;
    const statuses = [];
    for (const app of [one, two, one]) statuses.push((await app.inject({ method: 'POST', url: '/v1/pay' })).statusCode);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.equal((await two.inject({ method: 'POST', url: '/v1/pay' })).headers['retry-after'], '2');
  });

  it('fails loudly when classify names a class that has no rate', async () => {
    const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
    const loose: Record<string, BucketRate> = classes;
    rateLimit(app, { classes: loose, classify: () => 'auth', clock: new ManualClock() });
    app.get('/', async () => ({ ok: true, data: {} }));
    assert.equal((await app.inject({ method: 'GET', url: '/' })).statusCode, 500);
  });
});

describe('parseBucketRate', () => {
  it('reads <perSecond>/<burst>', () => {
    assert.deepEqual(parseBucketRate('100/200'), { perSecond: 100, burst: 200 });
    assert.deepEqual(parseBucketRate('0.5/1'), { perSecond: 0.5, burst: 1 });
  });

  it('refuses anything else', () => {
    for (const text of ['0/1', '1/0', '-1/2', '1/-2', 'abc', '1/2/3', '', ' 1/2', '1/2 ', '1/2.5', '1', '/2', '1/', '.5/1', '1e3/2', 'Infinity/1', '0.0/1']) {
      assert.equal(parseBucketRate(text), undefined, `"${text}"`);
    }
  });
});
