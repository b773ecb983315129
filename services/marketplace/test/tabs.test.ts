import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { publicKeyFromHex, verifyMessage } from '@platform/kit/auth/ed25519';
import { cosignSigningText } from '@platform/kit/marketplace-voucher';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { type Caller, paidWorldForFile, payTerms, providerManifest, seedActiveListing, signVoucher, startPaidMarketplace } from './paid-fixtures.ts';

const world = paidWorldForFile();

for (const engine of testEngines()) {
  describe(`channels, vouchers and streams on ${engine.name}`, () => {
    let market: Awaited<ReturnType<typeof startPaidMarketplace>>;
    let serviceId: string;
    before(async () => {
      market = await startPaidMarketplace(engine, world.settlement);
      serviceId = await seedActiveListing(market.database.db, providerManifest(world.provider.url));
    });
    after(async () => market.close());

    const fundedCaller = (amount?: string) => market.fundedCaller(amount);

    /** Opens a tab the way a client does: 402 with terms, then the signed hold. */
    async function open(caller: Caller, kind: 'channel' | 'stream', body: Record<string, unknown>) {
      const path = `/v1/${kind}s`;
      const challenge = await market.call('POST', path, { caller, body: { service_id: serviceId, ...body } });
      assert.equal(challenge.status, 402, JSON.stringify(challenge.body));
      const opened = await market.call('POST', path, {
        caller,
        body: { service_id: serviceId, ...body },
        headers: { 'x-ledger-payment': payTerms(caller.key, challenge.body.detail.terms) },
      });
      assert.equal(opened.status, 201, JSON.stringify(opened.body));
      return opened.body.data as { id: string; kind: 'channel' | 'stream'; service_id: string; hold_id: string; deposit: string };
    }

    function voucherCall(
      caller: Caller,
      tab: { id: string; kind: 'channel'; service_id: string },
      sequence: number,
      cumulative: string,
      args: Record<string, unknown> = {},
    ) {
      return market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body: { operation: 'echo', args, payment: { rail: 'voucher', channel_id: tab.id, ...signVoucher(caller.key, tab, sequence, cumulative) } },
      });
    }

    test('a channel: one hold, 1,000 calls paid by vouchers and co-signed, one capture of what was spent at close', async () => {
      const caller = await fundedCaller('10');
      const channel = await open(caller, 'channel', { deposit: '5' });
      assert.equal((await market.ledger.account(caller.did)).held, '5.000000');
      const tab = { id: channel.id, kind: 'channel' as const, service_id: serviceId };
      let last: { spent: string; sequence: string; authorized: string } | undefined;
      for (let sequence = 1; sequence <= 1000; sequence++) {
        // Each call may cost up to its cap (0.010000); it costs 0.001000 (one unit): the caller signs spent + cap.
        const answer = await voucherCall(caller, tab, sequence, (((sequence - 1) * 1000 + 10_000) / 1e6).toFixed(6), { text: String(sequence) });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        last = answer.body.data.tab;
      }
      assert.equal(last?.spent, '1.000000');
      assert.equal(last?.sequence, '1000');
      const statement = await market.call('POST', '/v1/vouchers/cosign', {
        caller,
        body: { channel_id: channel.id, ...signVoucher(caller.key, tab, 1000, last?.authorized as string) },
      });
      assert.equal(statement.status, 200, 'the current voucher again: the signed statement');
      assert.equal(statement.body.data.spent, '1.000000');
      const cosignText = cosignSigningText({ kind: 'channel', id: channel.id, sequence: '1000', authorized: last?.authorized as string, spent: '1.000000' });
      assert.ok(
        verifyMessage(publicKeyFromHex(market.identity.agent.publicKeyHex) as never, cosignText, statement.body.data.signature),
        'the co-signature verifies',
      );
      const closed = await market.call('POST', `/v1/channels/${channel.id}/close`, { caller });
      assert.equal(closed.status, 200);
      assert.equal(closed.body.data.status, 'closed');
      assert.equal(closed.body.data.spent, '1.000000');
      const capture = await market.ledger.receipt(closed.body.data.settlement_seq);
      assert.equal(capture.kind, 'capture');
      assert.equal(capture.amount, '1.000000');
      assert.deepEqual(await market.ledger.account(caller.did), { ...(await market.ledger.account(caller.did)), balance: '9.000000', held: '0.000000' });
      const calls = await market.database.db
        .selectFrom('invocations')
        .select(({ fn }) => fn.countAll<string>().as('n'))
        .where('channel_id', '=', channel.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(calls.n), 1000);
      const again = await market.call('POST', `/v1/channels/${channel.id}/close`, { caller });
      assert.equal(again.body.data.settlement_seq, closed.body.data.settlement_seq, 'closing twice captures once');
      const receipt = await market.call(
        'GET',
        `/v1/receipts/${(await market.database.db.selectFrom('invocations').select('id').where('channel_id', '=', channel.id).executeTakeFirstOrThrow()).id}`,
        { caller },
      );
      assert.equal(receipt.body.data.final, true);
      assert.equal(receipt.body.data.message.settlementSeq, closed.body.data.settlement_seq);
    });

    test('stale, replayed, too small, oversized and forged vouchers are refused; a replay of the same call answers it again', async () => {
      const caller = await fundedCaller();
      const channel = await open(caller, 'channel', { deposit: '0.050000' });
      const tab = { id: channel.id, kind: 'channel' as const, service_id: serviceId };
      const first = await voucherCall(caller, tab, 1, '0.010000', { text: 'one' });
      assert.equal(first.status, 200);
      const replay = await voucherCall(caller, tab, 1, '0.010000', { text: 'one' });
      assert.equal(replay.status, 200);
      assert.equal(replay.body.data.invocation_id, first.body.data.invocation_id, 'the same voucher and call: the same answer, paid once');
      const stale = await voucherCall(caller, tab, 1, '0.010000', { text: 'another call' });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.detail.reason, 'voucher_stale');
      const small = await voucherCall(caller, tab, 2, '0.005000');
      assert.equal(small.status, 402);
      assert.equal(small.body.detail.reason, 'voucher_too_small');
      assert.equal(small.body.detail.needed, '0.011000');
      const over = await voucherCall(caller, tab, 2, '0.060000');
      assert.equal(over.status, 402);
      assert.equal(over.body.detail.reason, 'voucher_exceeds_deposit');
      const forged = await market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body: { operation: 'echo', args: {}, payment: { rail: 'voucher', channel_id: channel.id, ...signVoucher(generateAgentKey(), tab, 2, '0.020000') } },
      });
      assert.equal(forged.status, 401);
      const stranger = await market.caller(generateAgentKey());
      const theirs = await market.call('POST', `/v1/invoke/${serviceId}`, {
        caller: stranger,
        body: { operation: 'echo', args: {}, payment: { rail: 'voucher', channel_id: channel.id, ...signVoucher(stranger.key, tab, 2, '0.020000') } },
      });
      assert.equal(theirs.status, 404, 'another caller’s channel does not exist for them');
      const failed = await market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body: { operation: 'fail', args: {}, payment: { rail: 'voucher', channel_id: channel.id, ...signVoucher(caller.key, tab, 2, '0.020000') } },
      });
      assert.equal(failed.status, 503, 'a failed call on a voucher costs nothing either');
      const state = await market.call('GET', `/v1/channels/${channel.id}`, { caller });
      assert.equal(state.body.data.spent, '0.001000');
      assert.equal(state.body.data.sequence, '2');
      // While another call is in flight (a slow one, failing at its timeout), vouchers are checked on the signing
      // thread: a forged one is refused there too, and an honest one is served.
      const slowCalls = world.provider.calls.length;
      const slow = market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body: { operation: 'slow', args: {}, payment: { rail: 'voucher', channel_id: channel.id, ...signVoucher(caller.key, tab, 3, '0.020000') } },
      });
      await eventually(() => world.provider.calls.length > slowCalls, 'the slow call reached the provider');
      const [forgedAlongside, honest] = await Promise.all([
        market.call('POST', `/v1/invoke/${serviceId}`, {
          caller,
          body: { operation: 'echo', args: {}, payment: { rail: 'voucher', channel_id: channel.id, ...signVoucher(generateAgentKey(), tab, 4, '0.030000') } },
        }),
        voucherCall(caller, tab, 4, '0.030000', { text: 'alongside' }),
      ]);
      assert.equal(forgedAlongside.status, 401);
      assert.equal(honest.status, 200);
      assert.equal(honest.body.data.tab.spent, '0.002000');
      assert.equal((await slow).status, 503);
    });

    test('POST /v1/vouchers/cosign raises what the caller allows and returns the co-signed statement; racing opens share one hold', async () => {
      const caller = await fundedCaller();
      const challenge = await market.call('POST', '/v1/channels', { caller, body: { service_id: serviceId, deposit: '1' } });
      const wire = payTerms(caller.key, challenge.body.detail.terms);
      const opens = await Promise.all(
        Array.from({ length: 3 }, () =>
          market.call('POST', '/v1/channels', { caller, body: { service_id: serviceId, deposit: '1' }, headers: { 'x-ledger-payment': wire } }),
        ),
      );
      assert.equal(new Set(opens.map((answer) => answer.body.data.id)).size, 1);
      assert.equal((await market.ledger.account(caller.did)).held, '1.000000', 'one hold');
      const channel = opens[0]?.body.data;
      const tab = { id: channel.id, kind: 'channel' as const, service_id: serviceId };
      const cosigned = await market.call('POST', '/v1/vouchers/cosign', {
        caller,
        body: { channel_id: channel.id, ...signVoucher(caller.key, tab, 1, '0.500000') },
      });
      assert.equal(cosigned.status, 200, JSON.stringify(cosigned.body));
      assert.equal(cosigned.body.data.authorized, '0.500000');
      assert.equal(cosigned.body.data.spent, '0.000000');
      const same = await market.call('POST', '/v1/vouchers/cosign', {
        caller,
        body: { channel_id: channel.id, ...signVoucher(caller.key, tab, 1, '0.500000') },
      });
      assert.equal(same.status, 200, 'the current voucher again: the statement as it stands');
      const stale = await market.call('POST', '/v1/vouchers/cosign', {
        caller,
        body: { channel_id: channel.id, ...signVoucher(caller.key, tab, 1, '0.600000') },
      });
      assert.equal(stale.status, 409);
      assert.equal((await market.call('POST', '/v1/vouchers/cosign', { caller, body: { ...signVoucher(caller.key, tab, 2, '0.6') } })).status, 400);
      const closed = await market.call('POST', `/v1/channels/${channel.id}/close`, { caller });
      assert.equal(closed.body.data.spent, '0.000000');
      assert.equal((await market.ledger.receipt(closed.body.data.settlement_seq)).kind, 'release', 'nothing spent: all of it released');
      assert.equal((await market.ledger.account(caller.did)).balance, '10.000000');
      const late = await voucherCall(caller, tab, 3, '0.700000');
      assert.equal(late.status, 409);
      assert.equal(late.body.detail.reason, 'tab_closed');
    });

    test('a stream session is billed as it goes by units vouchers and closed with one capture', async () => {
      const caller = await fundedCaller();
      const stream = await open(caller, 'stream', { operation: 'echo', deposit: '0.100000' });
      const tab = { id: stream.id, kind: 'stream' as const, service_id: serviceId };
      const settle = (sequence: number, units: string, cumulative: string) =>
        market.call('POST', `/v1/streams/${stream.id}/settle`, { caller, body: { units, ...signVoucher(caller.key, tab, sequence, cumulative) } });
      const first = await settle(1, '20', '0.020000');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.data.voucher.spent, '0.020000');
      assert.equal((await settle(2, '35', '0.035000')).body.data.stream.spent, '0.035000');
      assert.equal((await settle(3, '30', '0.030000')).status, 409, 'units cannot go down');
      assert.equal((await settle(3, '40', '0.041000')).status, 400, 'cumulative must be units × price');
      assert.equal((await settle(3, '200', '0.200000')).status, 402, 'past the deposit');
      const read = await market.call('GET', `/v1/streams/${stream.id}`, { caller });
      assert.deepEqual([read.body.data.kind, read.body.data.spent, read.body.data.sequence, read.body.data.status], ['stream', '0.035000', '2', 'open']);
      assert.equal((await market.call('GET', `/v1/streams/${stream.id}`, { caller: await market.caller() })).status, 404, 'another caller’s session');
      const closed = await market.call('POST', `/v1/streams/${stream.id}/close`, { caller });
      assert.equal(closed.body.data.spent, '0.035000');
      assert.equal((await market.ledger.receipt(closed.body.data.settlement_seq)).amount, '0.035000');
      assert.equal((await market.ledger.account(caller.did)).balance, '9.965000');
      assert.equal(
        (await market.call('POST', '/v1/streams', { caller, body: { service_id: serviceId, deposit: '1' } })).status,
        400,
        'a stream names its operation',
      );
      assert.equal((await market.call('POST', '/v1/channels', { caller, body: { service_id: serviceId, deposit: '-1' } })).status, 400);
      assert.equal((await market.call('POST', '/v1/channels', { caller, body: { service_id: serviceId, deposit: '1', expires_in_seconds: 59 } })).status, 400);
    });

    test('the sweep closes expired tabs with what was spent', async () => {
      const caller = await fundedCaller();
      const channel = await open(caller, 'channel', { deposit: '1', expires_in_seconds: 60 });
      const tab = { id: channel.id, kind: 'channel' as const, service_id: serviceId };
      assert.equal((await voucherCall(caller, tab, 1, '0.010000', { units: 2 })).status, 200);
      market.clock.advance(61_000);
      assert.equal((await voucherCall(caller, tab, 2, '0.020000')).body.detail.reason, 'tab_expired');
      await market.deps.payments.sweep.runOnce();
      const state = await market.call('GET', `/v1/channels/${channel.id}`, { caller });
      assert.equal(state.body.data.status, 'closed');
      assert.equal((await market.ledger.account(caller.did)).balance, '9.998000');
      market.clock.set(new Date());
    });
  });
}
