import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresEngine } from '@platform/testkit/databases';
import { type Settlement, startSettlement } from './harness.ts';

const engine = postgresEngine();

describe('one sequencer, a standby that takes over (PostgreSQL)', { skip: engine ? false : 'needs TEST_DATABASE_URL' }, () => {
  let primary: Settlement;
  let standby: Settlement;
  before(async () => {
    if (!engine) return;
    primary = await startSettlement(engine);
    standby = await startSettlement(engine, { databaseOptions: primary.databaseOptions, clock: primary.clock });
  });
  after(async () => {
    await standby?.close();
    await primary?.close();
  });

  test('the second instance holds no lock: it serves reads and answers writes with a retryable 503', async () => {
    assert.equal(primary.sequencer.role, 'sequencer');
    assert.equal(standby.sequencer.role, 'standby');
    const payer = await primary.fundedAgent('10');
    const payee = await primary.agent();
    const paid = await primary.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '4' } });
    await primary.call('POST', '/v1/settle', { token: payer.token });
    // Tokens are minted from the shared secret, so the standby recognises them.
    const refused = await standby.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
    assert.equal(refused.status, 503);
    assert.deepEqual([refused.body.error?.code, refused.body.error?.retryable, refused.headers['retry-after']], ['unavailable', true, '1']);
    assert.equal((await standby.call('GET', `/v1/account/${payee.did}`)).body.data.balance, '4.000000');
    const receipt = await standby.call('GET', `/v1/receipt/${paid.body.data.seq}`);
    assert.equal(receipt.status, 200);
    assert.ok(receipt.body.data.inclusion_proof, 'the standby builds proofs from the stored log');
    assert.equal((await standby.call('GET', '/v1/info')).body.data.role, 'standby');
  });

  test('when the sequencer stops, the standby takes the lock and the seq continues with no gap', async () => {
    const payer = await primary.fundedAgent('10');
    const payee = await primary.agent();
    const last = await primary.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
    await primary.sequencer.stop();
    assert.equal((await primary.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } })).status, 503);
    primary.clock.advance(1_000);
    await standby.waitForRole('sequencer');
    const next = await standby.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.data.seq, last.body.data.seq + 1);
    assert.equal((await standby.call('GET', `/v1/account/${payer.did}`)).body.data.balance, '8.000000');
    const settled = await standby.call('POST', '/v1/settle', { token: payer.token });
    assert.equal(settled.body.data.batch.number, 2, 'batch numbering continues too');
  });
});
