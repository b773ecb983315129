import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { type Scheduler, startScheduler } from './harness.ts';

for (const engine of testEngines()) {
  describe(`alarm routes on ${engine.name}`, () => {
    let s: Scheduler;
    let token: string;
    before(async () => {
      s = await startScheduler(engine);
      ({ token } = await s.agent());
    });
    after(() => s.close());

    const create = (body: Record<string, unknown>, as = token) => s.call('POST', '/v1/alarms', { token: as, body });
    async function expect400(body: Record<string, unknown>, message: RegExp) {
      const response = await create(body);
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 200));
      assert.equal(response.body.error?.code, 'invalid_request');
      assert.match(response.body.error?.message ?? '', message);
    }

    describe('create', () => {
      test('a once alarm with delay_seconds is active and due that many seconds after now', async () => {
        const response = await create({ kind: 'once', wake_message: 'stand up', delay_seconds: 90 });
        assert.equal(response.status, 200);
        assert.deepEqual(Object.keys(response.body.data).sort(), ['id', 'next_fire_at', 'status']);
        assert.equal(response.body.data.status, 'active');
        assert.equal(response.body.data.next_fire_at, new Date(s.clock.now().getTime() + 90_000).toISOString());
        const view = await s.call('GET', `/v1/alarms/${response.body.data.id}`, { token });
        assert.deepEqual(view.body.data, {
          id: response.body.data.id,
          label: '',
          kind: 'once',
          cron_expr: '',
          timezone: 'UTC',
          next_fire_at: response.body.data.next_fire_at,
          conversation_id: '',
          wake_message: 'stand up',
          payload: {},
          status: 'active',
          idempotency_key: '',
          max_failures: 5,
          failure_count: 0,
          last_error: '',
          created_at: s.clock.now().toISOString(),
          last_fired_at: null,
        });
      });
      test('a once alarm with fire_at keeps every given field', async () => {
        const body = {
          kind: 'once',
          wake_message: 'call mum',
          fire_at: '2026-03-02T09:30:00+01:00',
          label: 'Mum',
          conversation_id: 'conv-1',
          payload: { n: 1, nested: { a: [1, 2] } },
          max_failures: 2,
        };
        const created = await create(body);
        assert.equal(created.body.data.next_fire_at, '2026-03-02T08:30:00.000Z');
        const view = (await s.call('GET', `/v1/alarms/${created.body.data.id}`, { token })).body.data;
        assert.equal(view.label, 'Mum');
        assert.equal(view.conversation_id, 'conv-1');
        assert.deepEqual(view.payload, { n: 1, nested: { a: [1, 2] } });
        assert.equal(view.max_failures, 2);
      });
      test('a cron alarm is due at its first occurrence in its timezone', async () => {
        // 2026-03-01 is a Sunday; 09:00 in New York (EST, UTC-5) on Monday is 14:00Z.
        const response = await create({ kind: 'cron', wake_message: 'standup', cron_expr: '0 9 * * 1-5', timezone: 'America/New_York' });
        assert.equal(response.status, 200);
        assert.equal(response.body.data.next_fire_at, '2026-03-02T14:00:00.000Z');
        const view = (await s.call('GET', `/v1/alarms/${response.body.data.id}`, { token })).body.data;
        assert.equal(view.cron_expr, '0 9 * * 1-5');
        assert.equal(view.timezone, 'America/New_York');
      });
      test('a fire_at in the past fires at once (next_fire_at keeps the asked time)', async () => {
        const response = await create({ kind: 'once', wake_message: 'late', fire_at: '2026-03-01T11:00:00Z' });
        assert.equal(response.body.data.next_fire_at, '2026-03-01T11:00:00.000Z');
      });
    });

    describe('create: invalid requests are 400 invalid_request', () => {
      test('kind', async () => {
        await expect400({ kind: 'weekly', wake_message: 'x', delay_seconds: 1 }, /kind/);
        await expect400({ wake_message: 'x', delay_seconds: 1 }, /kind/);
      });
      test('wake_message missing, empty or blank', async () => {
        await expect400({ kind: 'once', delay_seconds: 1 }, /wake_message/);
        await expect400({ kind: 'once', wake_message: '', delay_seconds: 1 }, /wake_message/);
        await expect400({ kind: 'once', wake_message: '   ', delay_seconds: 1 }, /wake_message/);
      });
      test('once: exactly one of delay_seconds or fire_at', async () => {
        await expect400({ kind: 'once', wake_message: 'x' }, /exactly one/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 5, fire_at: '2026-03-02T00:00:00Z' }, /exactly one/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 5, cron_expr: '* * * * *' }, /cron_expr/);
      });
      test('delay_seconds must be a non-negative integer within 10 years', async () => {
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: -1 }, /delay_seconds/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 1.5 }, /delay_seconds/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: '60' }, /delay_seconds/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 315_360_001 }, /delay_seconds/);
        assert.equal((await create({ kind: 'once', wake_message: 'x', delay_seconds: 315_360_000 })).status, 200);
        assert.equal((await create({ kind: 'once', wake_message: 'x', delay_seconds: 0 })).status, 200);
      });
      test('fire_at must be ISO 8601 with an offset, within 10 years', async () => {
        await expect400({ kind: 'once', wake_message: 'x', fire_at: 'tomorrow' }, /fire_at/);
        await expect400({ kind: 'once', wake_message: 'x', fire_at: '2026-03-02T09:00:00' }, /offset/);
        await expect400({ kind: 'once', wake_message: 'x', fire_at: '2026-02-30T09:00:00Z' }, /fire_at/);
        await expect400({ kind: 'once', wake_message: 'x', fire_at: '2037-01-01T00:00:00Z' }, /10 years ahead/);
        // The past fires at once, up to the same horizon back: year 0 was a 500 (PostgreSQL holds no year 0).
        await expect400({ kind: 'once', wake_message: 'x', fire_at: '2016-02-29T11:59:59Z' }, /10 years ago/);
        await expect400({ kind: 'once', wake_message: 'x', fire_at: '0000-01-01T00:00:00Z' }, /10 years ago/);
        assert.equal((await create({ kind: 'once', wake_message: 'x', fire_at: '2016-03-04T12:00:00Z' })).status, 200);
      });
      test('cron: a valid 5-field expression and a known timezone', async () => {
        await expect400({ kind: 'cron', wake_message: 'x' }, /cron_expr is required/);
        await expect400({ kind: 'cron', wake_message: 'x', cron_expr: '0 0 * * * *' }, /5 fields/);
        await expect400({ kind: 'cron', wake_message: 'x', cron_expr: '@daily' }, /5 fields/);
        await expect400({ kind: 'cron', wake_message: 'x', cron_expr: '61 * * * *' }, /cron_expr is invalid/);
        await expect400({ kind: 'cron', wake_message: 'x', cron_expr: '0 0 30 2 *' }, /never fires/);
        await expect400({ kind: 'cron', wake_message: 'x', cron_expr: '0 9 * * *', timezone: 'Mars/Olympus' }, /timezone/);
        await expect400({ kind: 'cron', wake_message: 'x', cron_expr: '0 9 * * *', delay_seconds: 5 }, /not delay_seconds/);
      });
      test('unknown fields are refused, so owner and target cannot come from the body', async () => {
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 1, owner_did: 'did:platform:x:0123456789abcdef' }, /additional/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 1, user_id: 'someone' }, /additional/);
      });
      test('payload must be an object', async () => {
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 1, payload: [1, 2] }, /payload/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 1, payload: 'text' }, /payload/);
      });
      test('max_failures from 1 to 100', async () => {
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 1, max_failures: 0 }, /max_failures/);
        await expect400({ kind: 'once', wake_message: 'x', delay_seconds: 1, max_failures: 101 }, /max_failures/);
        assert.equal((await create({ kind: 'once', wake_message: 'x', delay_seconds: 1, max_failures: 100 })).status, 200);
        assert.equal((await create({ kind: 'once', wake_message: 'x', delay_seconds: 1, max_failures: 1 })).status, 200);
      });
      test('a body that is not JSON is 400 and a non-JSON content type is 415', async () => {
        const headers = { authorization: 'Bearer test-transport-token', 'x-scheduler-agent': token };
        const broken = await s.app.inject({
          method: 'POST',
          url: '/v1/alarms',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: '{"kind":',
        });
        assert.equal(broken.statusCode, 400);
        assert.equal(broken.json().error.code, 'invalid_request');
        const text = await s.app.inject({ method: 'POST', url: '/v1/alarms', headers: { ...headers, 'content-type': 'application/xml' }, payload: '<alarm/>' });
        assert.equal(text.statusCode, 415);
        assert.equal(text.json().error.code, 'unsupported_media_type');
      });
    });

    describe('limits, at and past each edge', () => {
      const base = { kind: 'once', delay_seconds: 1 };
      const edges: Array<[string, number, (n: number) => Record<string, unknown>]> = [
        ['wake_message', 16_384, (n) => ({ ...base, wake_message: 'w'.repeat(n) })],
        ['label', 200, (n) => ({ ...base, wake_message: 'x', label: 'l'.repeat(n) })],
        ['conversation_id', 200, (n) => ({ ...base, wake_message: 'x', conversation_id: 'c'.repeat(n) })],
        ['idempotency_key', 200, (n) => ({ ...base, wake_message: 'x', idempotency_key: `edge-${'k'.repeat(n - 5)}-${Math.random()}`.slice(0, n) })],
        ['cron_expr', 200, (n) => ({ kind: 'cron', wake_message: 'x', cron_expr: `${n % 2 ? '' : ' '}0 9 * * 1${',1'.repeat(Math.floor((n - 9) / 2))}` })],
        ['timezone', 64, (n) => ({ ...base, wake_message: 'x', timezone: 'UTC'.padEnd(n, ' ') })],
      ];
      for (const [field, limit, body] of edges) {
        test(`${field}: ${limit} characters pass the length check, ${limit + 1} are refused`, async () => {
          const atLimit = await create(body(limit));
          if (field === 'timezone')
            assert.match(atLimit.body.error?.message ?? '', /IANA/, 'a padded timezone passes the length check and fails the name check');
          else assert.equal(atLimit.status, 200, JSON.stringify(atLimit.body));
          await expect400(body(limit + 1), new RegExp(field));
        });
      }
      test('payload: 16 KiB of JSON passes, one byte more is refused', async () => {
        const payloadOf = (bytes: number) => ({ d: 'p'.repeat(bytes - '{"d":""}'.length) });
        assert.equal((await create({ ...base, wake_message: 'x', payload: payloadOf(16 * 1024) })).status, 200);
        await expect400({ ...base, wake_message: 'x', payload: payloadOf(16 * 1024 + 1) }, /payload must be at most 16384 bytes/);
      });
      test('a body over 64 KiB is 413 payload_too_large', async () => {
        const response = await create({ ...base, wake_message: 'x', label: 'y'.repeat(70_000) });
        assert.equal(response.status, 413);
        assert.equal(response.body.error?.code, 'payload_too_large');
      });
    });

    describe('idempotency', () => {
      test('the same key and parameters return the stored alarm in the same 200 shape', async () => {
        const body = { kind: 'once', wake_message: 'x', delay_seconds: 60, idempotency_key: 'same-1' };
        const first = await create(body);
        s.clock.advance(5_000);
        const second = await create(body);
        assert.deepEqual(second, first);
      });
      test('racing requests with one key create one alarm', async () => {
        const body = { kind: 'cron', wake_message: 'x', cron_expr: '*/5 * * * *', idempotency_key: 'race-1' };
        const answers = await Promise.all(Array.from({ length: 8 }, () => create(body)));
        assert.ok(answers.every((answer) => answer.status === 200));
        assert.equal(new Set(answers.map((answer) => answer.body.data.id)).size, 1);
        const listed = (await s.call('GET', '/v1/alarms?limit=500', { token })).body.data.alarms.filter(
          (alarm: { idempotency_key: string }) => alarm.idempotency_key === 'race-1',
        );
        assert.equal(listed.length, 1);
      });
      test('the same key with different parameters is 409 conflict and changes nothing', async () => {
        const first = await create({ kind: 'once', wake_message: 'x', delay_seconds: 60, idempotency_key: 'clash-1' });
        const clash = await create({ kind: 'once', wake_message: 'y', delay_seconds: 60, idempotency_key: 'clash-1' });
        assert.equal(clash.status, 409);
        assert.equal(clash.body.error?.code, 'conflict');
        assert.equal(clash.body.error?.alarm_id, first.body.data.id, 'the envelope declared for 4xx keeps the members of its own');
        const view = await s.call('GET', `/v1/alarms/${first.body.data.id}`, { token });
        assert.equal(view.body.data.wake_message, 'x');
      });
      test('keys are scoped to the owner DID', async () => {
        const other = await s.agent();
        const body = { kind: 'once', wake_message: 'x', delay_seconds: 60, idempotency_key: 'shared-key' };
        const mine = await create(body);
        const theirs = await create(body, other.token);
        assert.equal(theirs.status, 200);
        assert.notEqual(theirs.body.data.id, mine.body.data.id);
      });
    });

    describe('list, get and delete', () => {
      test("list returns only the caller's alarms, most recent first, with count", async () => {
        const { token: fresh } = await s.agent();
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          ids.push((await create({ kind: 'once', wake_message: `m${i}`, delay_seconds: 60 }, fresh)).body.data.id);
          s.clock.advance(1);
        }
        const listed = await s.call('GET', '/v1/alarms', { token: fresh });
        assert.equal(listed.body.data.count, 3);
        assert.deepEqual(
          listed.body.data.alarms.map((alarm: { id: string }) => alarm.id),
          ids.reverse(),
        );
        const two = await s.call('GET', '/v1/alarms?limit=2', { token: fresh });
        assert.equal(two.body.data.count, 2);
        assert.deepEqual(
          two.body.data.alarms.map((alarm: { id: string }) => alarm.id),
          ids.slice(0, 2),
        );
      });
      test('limit defaults to 100 and accepts up to 500', async () => {
        const { token: busy } = await s.agent();
        for (let i = 0; i < 101; i++) await create({ kind: 'once', wake_message: `m${i}`, delay_seconds: 60 }, busy);
        assert.equal((await s.call('GET', '/v1/alarms', { token: busy })).body.data.count, 100);
        assert.equal((await s.call('GET', '/v1/alarms?limit=500', { token: busy })).body.data.count, 101);
      });
      test('a limit that is not an integer from 1 to 500 is 400', async () => {
        for (const limit of ['0', '501', '-1', 'abc', '1.5', '']) {
          const response = await s.call('GET', `/v1/alarms?limit=${limit}`, { token });
          assert.equal(response.status, 400, limit);
          assert.match(response.body.error?.message ?? '', /limit must be an integer from 1 to 500/);
        }
      });
      test("get and delete of another owner's, an unknown or a malformed id are 404 not_found", async () => {
        const other = await s.agent();
        const theirs = (await create({ kind: 'once', wake_message: 'x', delay_seconds: 60 }, other.token)).body.data.id;
        for (const id of [theirs, '01900000-0000-7000-8000-000000000000', 'not-a-uuid']) {
          for (const method of ['GET', 'DELETE'] as const) {
            const response = await s.call(method, `/v1/alarms/${id}`, { token });
            assert.equal(response.status, 404, `${method} ${id}`);
            assert.equal(response.body.error?.code, 'not_found');
          }
        }
        assert.equal((await s.call('GET', `/v1/alarms/${theirs}`, { token: other.token })).body.data.status, 'active');
      });
      test('delete cancels an active alarm and repeating it returns the same view', async () => {
        const id = (await create({ kind: 'once', wake_message: 'x', delay_seconds: 60 })).body.data.id;
        const first = await s.call('DELETE', `/v1/alarms/${id}`, { token });
        assert.equal(first.status, 200);
        assert.equal(first.body.data.status, 'cancelled');
        const again = await s.call('DELETE', `/v1/alarms/${id}`, { token, headers: { 'content-type': 'application/json' } });
        assert.deepEqual(again, first);
      });
      test('unknown routes are 404 in the envelope', async () => {
        const response = await s.call('GET', '/v1/nothing-here', { token });
        assert.deepEqual(response, {
          status: 404,
          body: { ok: false, error: { code: 'not_found', message: 'no route for GET /v1/nothing-here', retryable: false } },
        });
      });
    });
  });
}
