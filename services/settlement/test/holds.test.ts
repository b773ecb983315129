import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { type Settlement, startSettlement } from './harness.ts';

for (const engine of testEngines()) {
  describe(`holds on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine);
    });
    after(async () => s.close());

    async function openHold(amount: string, seconds = 600) {
      const payer = await s.fundedAgent('100');
      const payee = await s.agent();
      const created = await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount, expires_in_seconds: seconds } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return { payer, payee, hold: created.body.data.hold };
    }

    const balanceOf = async (token: string) => (await s.call('GET', '/v1/balance', { token })).body.data;

    test('a hold locks the amount: balance down, held and escrow_bound up, status open', async () => {
      const { payer, hold } = await openHold('30');
      assert.equal(hold.status, 'open');
      assert.equal(hold.amount, '30.000000');
      const balance = await balanceOf(payer.token);
      assert.deepEqual([balance.balance, balance.held, balance.escrow_bound], ['70.000000', '30.000000', '30.000000']);
      const read = await s.call('GET', `/v1/hold/${hold.id}`);
      assert.equal(read.body.data.status, 'open');
    });

    test('the beneficiary captures part; the rest returns to the payer in the same step', async () => {
      const { payer, payee, hold } = await openHold('30');
      const captured = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token, body: { amount: '12.5' } });
      assert.equal(captured.status, 200, JSON.stringify(captured.body));
      assert.equal(captured.body.data.hold.status, 'captured');
      assert.equal(captured.body.data.seqs.length, 2);
      assert.deepEqual([captured.body.data.hold.captured, captured.body.data.hold.returned], ['12.500000', '17.500000']);
      assert.equal((await balanceOf(payee.token)).balance, '12.500000');
      const payerBalance = await balanceOf(payer.token);
      assert.deepEqual([payerBalance.balance, payerBalance.held], ['87.500000', '0.000000']);
      const again = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token });
      assert.equal(again.status, 409);
      assert.equal(again.body.error?.reason, 'hold_closed');
    });

    test('capturing the whole hold by default, and never more than it', async () => {
      const { payee, hold } = await openHold('5');
      const tooMuch = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token, body: { amount: '5.000001' } });
      assert.equal(tooMuch.status, 409);
      assert.equal(tooMuch.body.error?.reason, 'exceeds_hold');
      const all = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token, body: {} });
      assert.equal(all.status, 200);
      assert.deepEqual(all.body.data.seqs.length, 1);
      assert.equal((await balanceOf(payee.token)).balance, '5.000000');
    });

    test('only the beneficiary captures; a stranger can neither capture nor release', async () => {
      const { payer, hold } = await openHold('5');
      const stranger = await s.agent();
      assert.equal((await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payer.token })).status, 403);
      assert.equal((await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: stranger.token })).status, 403);
      assert.equal((await s.call('POST', `/v1/hold/${hold.id}/release`, { token: stranger.token })).status, 403);
    });

    test('the beneficiary may release at any time; the payer only after expiry', async () => {
      const first = await openHold('8');
      const early = await s.call('POST', `/v1/hold/${first.hold.id}/release`, { token: first.payer.token });
      assert.equal(early.status, 403);
      const released = await s.call('POST', `/v1/hold/${first.hold.id}/release`, { token: first.payee.token });
      assert.equal(released.status, 200);
      assert.equal(released.body.data.hold.status, 'released');
      assert.equal((await balanceOf(first.payer.token)).balance, '100.000000');

      const second = await openHold('8', 60);
      s.clock.advance(60_000);
      const late = await s.call('POST', `/v1/hold/${second.hold.id}/release`, { token: second.payer.token });
      assert.equal(late.status, 200, JSON.stringify(late.body));
      assert.equal(late.body.data.hold.status, 'released');
    });

    test('GET /v1/holds lists the caller’s open holds on both sides, newest first, paged; closed ones leave it', async () => {
      const payer = await s.fundedAgent('100');
      const payee = await s.agent();
      const stranger = await s.agent();
      const place = async (amount: string) =>
        (await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount, expires_in_seconds: 600 } })).body.data.hold;
      const [first, second, third] = [await place('1'), await place('2'), await place('3')];
      const listed = async (token: string, query = '') => {
        const answer = await s.call('GET', `/v1/holds${query}`, { token });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        return answer.body.data as { holds: { id: string; payer: string; payee: string; amount: string; expires_at: string }[]; next_before: number | null };
      };
      const mine = await listed(payer.token);
      assert.deepEqual(
        mine.holds.map((hold) => [hold.id, hold.payee, hold.amount]),
        [
          [third.id, payee.did, '3.000000'],
          [second.id, payee.did, '2.000000'],
          [first.id, payee.did, '1.000000'],
        ],
      );
      assert.equal(mine.holds[0]?.expires_at, third.expires_at);
      assert.equal(mine.next_before, null);
      // What the payer's account says is held is what the list adds up to.
      assert.equal((await balanceOf(payer.token)).held, '6.000000');
      assert.deepEqual(
        (await listed(payee.token)).holds.map((hold) => hold.payer),
        [payer.did, payer.did, payer.did],
      );
      assert.deepEqual((await listed(stranger.token)).holds, [], 'nobody else’s holds');
      // Paged at the limit: two, then the rest after next_before.
      const page = await listed(payer.token, '?limit=2');
      assert.deepEqual(
        page.holds.map((hold) => hold.id),
        [third.id, second.id],
      );
      assert.deepEqual(
        (await listed(payer.token, `?limit=2&before=${page.next_before}`)).holds.map((hold) => hold.id),
        [first.id],
      );
      await s.call('POST', `/v1/hold/${second.id}/capture`, { token: payee.token });
      assert.deepEqual(
        (await listed(payer.token)).holds.map((hold) => hold.id),
        [third.id, first.id],
        'a captured hold is no longer open',
      );
      for (const query of ['?limit=0', '?limit=201', '?before=0', '?before=x'])
        assert.equal((await s.call('GET', `/v1/holds${query}`, { token: payer.token })).status, 400, query);
      assert.equal((await listed(payer.token, '?limit=200')).holds.length, 2, 'at the limit');
      assert.equal((await s.call('GET', '/v1/holds')).status, 401, 'without a principal token');
    });

    test('hold input errors: unknown hold 404, malformed id 400, self hold 400, expiry out of range 400, insufficient funds 409', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      assert.equal((await s.call('POST', '/v1/hold/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/capture', { token: payee.token })).status, 404);
      assert.equal((await s.call('POST', '/v1/hold/not-a-uuid/release', { token: payee.token })).status, 400);
      assert.equal((await s.call('GET', '/v1/hold/not-a-uuid')).status, 400);
      assert.equal((await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payer.did, amount: '1' } })).status, 400);
      assert.equal((await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount: '1', expires_in_seconds: 0 } })).status, 400);
      assert.equal(
        (await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount: '1', expires_in_seconds: 30 * 86_400 } })).status,
        200,
      );
      assert.equal(
        (await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount: '1', expires_in_seconds: 30 * 86_400 + 1 } })).status,
        400,
      );
      const broke = await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount: '9.000001' } });
      assert.equal(broke.status, 409);
      assert.equal(broke.body.error?.reason, 'insufficient_funds');
    });

    test('capture and release are idempotent per key', async () => {
      const { payee, hold } = await openHold('4');
      const first = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token, body: { amount: '1', idempotency_key: 'cap-1' } });
      const replay = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token, body: { amount: '1', idempotency_key: 'cap-1' } });
      assert.equal(replay.status, 200);
      assert.deepEqual(replay.body.data, first.body.data);
      const other = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token, body: { amount: '2', idempotency_key: 'cap-1' } });
      assert.equal(other.status, 409);
    });

    test('an expired hold cannot be captured, stops counting in escrow_bound, and returns to the payer by itself', async () => {
      const { payer, payee, hold } = await openHold('20', 120);
      s.clock.advance(120_000);
      const capture = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: payee.token });
      assert.equal(capture.status, 409);
      assert.equal(capture.body.error?.reason, 'hold_expired');
      // The sweep runs on the sequencer's tick; until then the funds are still held but no longer capturable.
      const waiting = await balanceOf(payer.token);
      assert.deepEqual([waiting.held, waiting.escrow_bound], ['20.000000', '0.000000']);
      s.clock.advance(3_600_000);
      await eventually(async () => (await s.call('GET', `/v1/hold/${hold.id}`)).body.data.status === 'expired', 'the expiry sweep returns the hold');
      const balance = await balanceOf(payer.token);
      assert.deepEqual([balance.balance, balance.held, balance.escrow_bound], ['100.000000', '0.000000', '0.000000']);
      const feed = await s.call('GET', `/v1/transfers?did=${payer.did}`);
      assert.deepEqual(
        feed.body.data.transfers.map((t: { kind: string }) => t.kind),
        ['expire', 'hold', 'deposit'],
      );
    });
  });
}
