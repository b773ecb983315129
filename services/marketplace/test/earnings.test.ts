import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { monotonicUuidv7 } from '@platform/kit/ids';
import { testEngines } from '@platform/testkit/databases';
import { type Developer, publishListing, signIn } from './developer-fixtures.ts';
import { paidWorldForFile, payTerms, providerManifest, startPaidMarketplace } from './paid-fixtures.ts';

const world = paidWorldForFile();

for (const engine of testEngines()) {
  describe(`dashboards, payouts and the sweep on ${engine.name}`, () => {
    let market: Awaited<ReturnType<typeof startPaidMarketplace>>;
    let developer: Developer;
    let serviceId: string;
    const payee = generateAgentKey();
    before(async () => {
      market = await startPaidMarketplace(engine, world.settlement);
      developer = await signIn(market);
      serviceId = (await publishListing(market, developer, { manifest: providerManifest(world.provider.url), payout_did: payee.did })).id;
    });
    after(async () => market.close());

    async function paidCall(caller: Awaited<ReturnType<typeof market.caller>>, args: Record<string, unknown>) {
      const body = { operation: 'echo', args };
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body });
      return market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body,
        headers: { 'x-ledger-payment': payTerms(caller.key, challenge.body.detail.terms) },
      });
    }

    test('a published listing earns from paid calls; the owner sees it and is paid out once to the payout DID', async () => {
      const caller = await market.caller(generateAgentKey());
      await market.ledger.fund(caller.did, '5');
      assert.equal((await paidCall(caller, { units: 4 })).status, 200);
      assert.equal((await paidCall(caller, { units: 6 })).status, 200);
      const earnings = await market.call('GET', '/v1/me/earnings', { headers: developer.headers });
      assert.equal(earnings.status, 200);
      assert.equal(earnings.body.data.earned, '0.010000');
      assert.equal(earnings.body.data.services[0].available, '0.010000');
      const stranger = await signIn(market);
      assert.equal((await market.call('POST', `/v1/services/${serviceId}/payout`, { headers: stranger.headers })).status, 403);
      const payout = await market.call('POST', `/v1/services/${serviceId}/payout`, { headers: developer.headers });
      assert.equal(payout.status, 200, JSON.stringify(payout.body));
      assert.equal(payout.body.data.status, 'paid', JSON.stringify(payout.body.data));
      assert.equal(payout.body.data.amount, '0.010000');
      assert.equal((await market.ledger.account(payee.did)).balance, '0.010000');
      const again = await market.call('POST', `/v1/services/${serviceId}/payout`, { headers: developer.headers });
      assert.equal(again.status, 409);
      assert.equal(again.body.detail.reason, 'nothing_to_pay');
      const after = await market.call('GET', '/v1/me/earnings', { headers: developer.headers });
      assert.equal(after.body.data.paid_out, '0.010000');
      assert.equal(after.body.data.payouts.length, 1);
      const services = await market.call('GET', '/v1/me/services', { headers: developer.headers });
      assert.equal(services.body.data.results[0].id, serviceId);
      assert.equal(services.body.data.results[0].uptime_bps, 10_000, 'measured from the two calls');
      assert.equal((await market.call('GET', '/v1/me/earnings')).status, 401);
    });

    test('a caller sees its spend and identity; /v1/me names whoever the credentials name', async () => {
      const caller = await market.caller(generateAgentKey());
      await market.ledger.fund(caller.did, '1');
      for (const units of [1, 2, 3]) assert.equal((await paidCall(caller, { units })).status, 200);
      const first = await market.call('GET', '/v1/me/spend?limit=2', { caller });
      assert.equal(first.status, 200);
      assert.equal(first.body.data.total, '0.006000');
      assert.equal(first.body.data.items.length, 2);
      assert.equal(first.body.data.items[0].cost, '0.003000', 'newest first');
      const second = await market.call('GET', `/v1/me/spend?limit=2&cursor=${first.body.data.next_cursor}`, { caller });
      assert.equal(second.body.data.items.length, 1);
      assert.equal(second.body.data.next_cursor, null);
      assert.equal((await market.call('GET', '/v1/me/spend?limit=0', { caller })).status, 400);
      assert.equal((await market.call('GET', '/v1/me/spend?limit=100', { caller })).status, 200, 'the largest page');
      assert.equal((await market.call('GET', '/v1/me/spend?limit=101', { caller })).status, 400, 'past it');
      assert.equal((await market.call('GET', '/v1/me/spend?cursor=nope', { caller })).status, 400);
      const me = await market.call('GET', '/v1/me', { caller });
      assert.equal(me.body.data.caller.did, caller.did);
      assert.equal(me.body.data.caller.spent, '0.006000');
      assert.equal(me.body.data.developer, null);
      assert.equal(me.body.data.marketplace.signer, market.identity.signer.address);
      const asDeveloper = await market.call('GET', '/v1/me', { headers: developer.headers });
      assert.equal(asDeveloper.body.data.developer.address, developer.address);
      assert.equal(asDeveloper.body.data.developer.services, 1);
      assert.equal((await market.call('GET', '/v1/me')).status, 401);
    });

    test('the sweep releases the hold of a call a crash interrupted, and captures a finished call whose capture never reached settlement', async () => {
      const caller = await market.caller(generateAgentKey());
      await market.ledger.fund(caller.did, '1');
      const { payments } = market.deps;
      const listing = await payments.desk.listing(serviceId);
      const operation = listing.manifest.operations[0] as (typeof listing.manifest.operations)[number];
      const hold = async (args: unknown) => {
        const terms = payments.desk.terms(listing, operation, args, undefined, caller.did);
        return (
          await payments.settlement.placeHold(payTerms(caller.key, terms), {
            amount: terms.amount,
            ref: terms.ref,
            expiresInSeconds: 600,
            idempotencyKey: `sweep-test:${JSON.stringify(args)}`,
          })
        ).hold.id;
      };
      const startedLongAgo = new Date(market.clock.now().getTime() - 10 * 60_000);
      const row = (args: unknown, holdId: string, finished: boolean) => ({
        id: monotonicUuidv7(startedLongAgo.getTime()),
        listing_id: serviceId,
        operation: 'echo',
        caller_did: caller.did,
        idempotency_key: `sweep:${JSON.stringify(args)}`,
        request_hash: 'x',
        rail: 'hold' as const,
        quote_id: null,
        status: finished ? ('succeeded' as const) : ('pending' as const),
        cap_micros: 10_000n,
        cost_micros: finished ? 2_000n : 0n,
        units: finished ? 2n : 0n,
        hold_id: holdId,
        channel_id: null,
        capture_seq: null,
        request_digest: `0x${'1'.repeat(64)}`,
        response_digest: null,
        response: null,
        error: null,
        latency_ms: null,
        started_at: startedLongAgo,
        finished_at: finished ? startedLongAgo : null,
        receipt: null,
        tab_sequence: null,
      });
      const interrupted = row({ n: 1 }, await hold({ n: 1 }), false);
      const uncaptured = row({ n: 2 }, await hold({ n: 2 }), true);
      // A finished call whose hold ended before its capture (here released at settlement, as an expiry would).
      const lostHold = await hold({ n: 3 });
      await payments.settlement.release(lostHold, `sweep-test:lost:${lostHold}`);
      const lost = row({ n: 3 }, lostHold, true);
      await market.database.db.insertInto('invocations').values([interrupted, uncaptured, lost]).execute();
      assert.equal((await market.ledger.account(caller.did)).held, '0.020000');
      assert.ok((await payments.sweep.runOnce()) >= 3);
      const unpaid = await payments.desk.invocations.get(lost.id);
      assert.deepEqual([unpaid?.capture_seq, unpaid?.cost_micros], [0n, 0n], 'nothing captured: the call is recorded as not paid');
      assert.deepEqual(await market.ledger.account(caller.did), { ...(await market.ledger.account(caller.did)), balance: '0.998000', held: '0.000000' });
      const failed = await payments.desk.invocations.get(interrupted.id);
      assert.equal(failed?.status, 'failed');
      assert.notEqual(failed?.capture_seq, null);
      assert.notEqual((await payments.desk.invocations.get(uncaptured.id))?.capture_seq, null);
      assert.equal(await payments.sweep.runOnce(), 0, 'nothing left; settled once');
    });
  });
}
