import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { type Settlement, startSettlement } from './harness.ts';

/*
 * A group is written only once every receipt of it is signed. The signing runs while the previous group's callers
 * are answered, so its failure surfaces late in the writer's cycle: it must still answer the group's callers with a
 * retryable 503, write nothing of it, and step the writer down so it starts again from what is durable.
 */
for (const engine of testEngines()) {
  describe(`a receipt that cannot be signed on ${engine.name}`, () => {
    let s: Settlement;
    let failing = false;
    before(async () => {
      s = await startSettlement(engine, {
        key: (key) => ({
          ...key,
          sign: (message) => {
            if (failing) throw new Error('the signing key is unavailable');
            return key.sign(message);
          },
        }),
      });
    });
    after(async () => s.close());

    test('answers 503 retryable, writes nothing, and the retry with the same key pays once', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const body = { to: payee.did, amount: '2.5', idempotency_key: 'sign-fails-once' };

      failing = true;
      const refused = await s.call('POST', '/v1/pay', { token: payer.token, body });
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.error?.code, 'unavailable');
      assert.equal(refused.body.error?.retryable, true);
      assert.equal((await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance, '10.000000');
      assert.equal((await s.call('GET', `/v1/account/${payee.did}`)).status, 404, 'the payee was not created');

      // The writer stepped down; it leads again after its takeover poll (a sleep on the manual clock).
      failing = false;
      await eventually(() => {
        s.clock.advance(1_000);
        return s.sequencer.role === 'sequencer';
      }, 'the writer leads again');
      const paid = await s.call('POST', '/v1/pay', { token: payer.token, body });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      const replay = await s.call('POST', '/v1/pay', { token: payer.token, body });
      assert.equal(replay.body.data.seq, paid.body.data.seq, 'a replay answers the same seq');
      assert.equal((await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance, '7.500000');
      const receipt = await s.call('GET', `/v1/receipt/${paid.body.data.seq}`);
      assert.equal(receipt.status, 200);
      assert.match(receipt.body.data.receipt.signature, /^[0-9a-f]{128}$/);
    });
  });
}
