import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { settlementBatchItems } from '@platform/client/settlement-client';
import { encodeIntent, newIntentNonce, type SettlementIntent, signIntent } from '@platform/kit/settlement-intent';
import { testEngines } from '@platform/testkit/databases';
import { forgedIntent } from '@platform/testkit/forged-intent';
import { limits } from '../src/routes/inputs.ts';
import { type Settlement, startSettlement } from './harness.ts';

for (const engine of testEngines()) {
  describe(`hold batches on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine, { intentWorker: true });
    });
    after(async () => s.close());

    type Agent = Awaited<ReturnType<Settlement['agent']>>;
    /** A hold intent signed by `from`, as the marketplace receives it from a caller. */
    const holdIntent = (from: Agent, to: string, amount: string, terms: Partial<SettlementIntent> = {}) =>
      encodeIntent(
        signIntent(
          {
            version: 1,
            from: from.did,
            to,
            amount,
            ref: `0x${'ab'.repeat(32)}`,
            nonce: newIntentNonce(),
            expiry: new Date(s.clock.now().getTime() + 60_000).toISOString(),
            purpose: 'hold',
            ...terms,
          },
          from.key,
        ),
      );
    const balanceOf = async (did: string) => (await s.call('GET', `/v1/account/${did}`)).body.data;

    test('holds from several payers in one request: each answered in order, a refused one fails alone', async () => {
      const payee = await s.agent();
      const [alice, bob, poor] = [await s.fundedAgent('10'), await s.fundedAgent('10'), await s.agent()];
      const aliceWire = holdIntent(alice, payee.did, '2');
      const forged = forgedIntent(holdIntent(bob, payee.did, '1'));
      const items = [
        { intent: aliceWire, expires_in_seconds: 60, idempotency_key: 'a-1' },
        { intent: holdIntent(poor, payee.did, '1'), expires_in_seconds: 60 },
        { intent: forged, expires_in_seconds: 60 },
        { intent: holdIntent(bob, payee.did, '3'), expires_in_seconds: 60 },
      ];
      // No principal token: each hold is authorised by its payer's intent alone, as POST /v1/hold would be.
      const answer = await s.call('POST', '/v1/hold/batch', { body: { items } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const [first, second, third, fourth] = answer.body.data.results;
      assert.equal(first.ok, true);
      assert.deepEqual([first.data.hold.payer, first.data.hold.amount, first.data.hold.status], [alice.did, '2.000000', 'open']);
      assert.deepEqual([second.ok, second.status, second.error.code, second.error.reason], [false, 409, 'conflict', 'insufficient_funds']);
      assert.deepEqual([third.ok, third.status, third.error.code, third.error.reason], [false, 401, 'unauthorized', 'intent_invalid']);
      assert.match(third.error.message, /signature does not verify/, 'refused by the signature check (on the worker), not as malformed');
      assert.deepEqual([fourth.ok, fourth.data.hold.payer, fourth.data.hold.amount], [true, bob.did, '3.000000']);
      assert.ok(fourth.data.seq > first.data.seq, 'in the items’ order');
      assert.deepEqual([(await balanceOf(alice.did)).held, (await balanceOf(bob.did)).held], ['2.000000', '3.000000']);
      // The same item again is its original answer (idempotency key), not a second hold or a nonce error.
      const again = await s.call('POST', '/v1/hold/batch', { body: { items: [items[0]] } });
      assert.deepEqual(again.body.data.results[0], first);
      assert.equal((await balanceOf(alice.did)).held, '2.000000');
    });

    test('captures and releases in one request by the beneficiary, each answered on its own', async () => {
      const payee = await s.agent();
      const payer = await s.fundedAgent('20');
      const placed = await s.call('POST', '/v1/hold/batch', {
        body: { items: ['4', '4', '4'].map((amount) => ({ intent: holdIntent(payer, payee.did, amount), expires_in_seconds: 60 })) },
      });
      const [a, b, c] = placed.body.data.results.map((result: { data: { hold: { id: string } } }) => result.data.hold.id);
      const stranger = await s.agent();
      const items = [
        { hold_id: a, action: 'capture', amount: '1.5', idempotency_key: 'cap-a' },
        { hold_id: b, action: 'release' },
        { hold_id: c, action: 'capture', amount: '4.000001' },
        { hold_id: c, action: 'release', amount: '1' },
        { hold_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', action: 'release' },
        { hold_id: 'not-a-uuid', action: 'release' },
      ];
      const answer = await s.call('POST', '/v1/hold/batch/settle', { token: payee.token, body: { items } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const results = answer.body.data.results;
      assert.deepEqual(
        [results[0].ok, results[0].data.hold.captured, results[0].data.hold.returned, results[0].data.seqs.length],
        [true, '1.500000', '2.500000', 2],
      );
      assert.deepEqual([results[1].ok, results[1].data.hold.status], [true, 'released']);
      assert.deepEqual([results[2].status, results[2].error.reason], [409, 'exceeds_hold']);
      assert.deepEqual([results[3].status, results[3].error.field], [400, 'amount']);
      assert.equal(results[4].status, 404);
      assert.deepEqual([results[5].status, results[5].error.field], [400, 'hold_id']);
      assert.equal((await balanceOf(payee.did)).balance, '1.500000');
      assert.deepEqual([(await balanceOf(payer.did)).balance, (await balanceOf(payer.did)).held], ['14.500000', '4.000000']);
      // Someone else's captures fail item by item; the beneficiary's replay is its original answer.
      const foreign = await s.call('POST', '/v1/hold/batch/settle', { token: stranger.token, body: { items: [{ hold_id: c, action: 'capture' }] } });
      assert.equal(foreign.body.data.results[0].status, 403);
      const replay = await s.call('POST', '/v1/hold/batch/settle', { token: payee.token, body: { items: [items[0]] } });
      assert.deepEqual(replay.body.data.results[0], results[0]);
      // Without a principal token nothing is read: every item is the principal's.
      const anonymous = await s.call('POST', '/v1/hold/batch/settle', { body: { items: [{ hold_id: c, action: 'release' }] } });
      assert.equal(anonymous.status, 401);
    });

    test(`limits: 1 to ${limits.batchItems} items, a body of at most ${limits.batchBodyBytes} bytes`, async () => {
      assert.equal(settlementBatchItems, limits.batchItems, 'the client knows the limit');
      const payer = await s.fundedAgent('100');
      const payee = generateAgentKey().did;
      const hold = { to: payee, amount: '0.01', expires_in_seconds: 60 };
      const full = await s.call('POST', '/v1/hold/batch', { token: payer.token, body: { items: Array.from({ length: limits.batchItems }, () => hold) } });
      assert.equal(full.status, 200, JSON.stringify(full.body).slice(0, 300));
      assert.equal(full.body.data.results.filter((result: { ok: boolean }) => result.ok).length, limits.batchItems);
      assert.equal((await balanceOf(payer.did)).held, '0.640000');
      for (const count of [0, limits.batchItems + 1]) {
        const refused = await s.call('POST', '/v1/hold/batch', { token: payer.token, body: { items: Array.from({ length: count }, () => hold) } });
        assert.equal(refused.status, 400, `${count} items`);
      }
      const settleRefused = await s.call('POST', '/v1/hold/batch/settle', { token: payer.token, body: { items: [] } });
      assert.equal(settleRefused.status, 400);
      // A body past the limit is refused before it is read; one under it (the same items, padded keys) is read.
      const padded = (length: number) => ({ items: [{ ...hold, idempotency_key: 'k'.repeat(limits.idempotencyKeyChars) }], pad: 'x'.repeat(length) });
      const over = await s.call('POST', '/v1/hold/batch', { token: payer.token, body: padded(limits.batchBodyBytes) });
      assert.equal(over.status, 413);
      const under = await s.call('POST', '/v1/hold/batch', { token: payer.token, body: padded(limits.batchBodyBytes - 1024) });
      assert.equal(under.status, 400, 'read, then refused for its unknown member');
    });
  });
}
