import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { publicKeyFromHex, verifyMessage } from '@platform/kit/auth/ed25519';
import { parseAmount } from '@platform/kit/money';
import { testEngines } from '@platform/testkit/databases';
import { forgedIntent } from '@platform/testkit/forged-intent';
import { ManualClock } from '@platform/testkit/manual-clock';
import { type Hex, verifyTypedData } from 'viem';
import { marketplaceDomain, quoteTypes } from '../src/payments/eip712.ts';
import { providerCallDomain } from '../src/payments/provider-call.ts';
import { startMarketplace } from './harness.ts';
import { type Caller, paidWorldForFile, payTerms, providerManifest, seedActiveListing, startPaidMarketplace } from './paid-fixtures.ts';

const micros = (text: string): bigint => {
  const parsed = parseAmount(text, { allowZero: true });
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.micros;
};

const world = paidWorldForFile();

for (const engine of testEngines()) {
  describe(`paying for a call (hold, serve, capture) on ${engine.name}`, () => {
    let market: Awaited<ReturnType<typeof startPaidMarketplace>>;
    let serviceId: string;
    before(async () => {
      market = await startPaidMarketplace(engine, world.settlement);
      serviceId = await seedActiveListing(market.database.db, providerManifest(world.provider.url));
    });
    after(async () => market.close());

    const fundedCaller = (amount?: string) => market.fundedCaller(amount);

    /** Asks without payment (402), signs the terms, pays: the paid retry's answer. */
    async function paidCall(caller: Caller, body: Record<string, unknown>, headers: Record<string, string> = {}) {
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers });
      assert.equal(challenge.status, 402, JSON.stringify(challenge.body));
      const wire = payTerms(caller.key, challenge.body.detail.terms);
      return market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers: { ...headers, 'x-ledger-payment': wire } });
    }

    test('without payment: 402 payment_required with the terms in the body and in X-Payment-Required; nothing moves', async () => {
      const caller = await fundedCaller();
      const answer = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body: { operation: 'echo', args: { text: 'hi' } } });
      assert.equal(answer.status, 402);
      assert.equal(answer.body.error, 'payment_required');
      const terms = answer.body.detail.terms;
      assert.equal(terms.amount, '0.010000', 'the cap: price × max_units');
      assert.equal(terms.pay_to, market.identity.agent.did);
      assert.deepEqual(JSON.parse(Buffer.from(answer.headers['x-payment-required'] as string, 'base64url').toString('utf8')), terms);
      assert.deepEqual(await market.ledger.account(caller.did), { ...(await market.ledger.account(caller.did)), balance: '10.000000', held: '0.000000' });
      assert.equal(world.provider.calls.filter((call) => call.body.caller_did === caller.did).length, 0, 'the provider is not called before payment');
    });

    test('a paid call: held for the cap, served, only the units used captured, the rest back at once; balances agree on both sides', async () => {
      const caller = await fundedCaller();
      const before = await market.ledger.account(market.identity.agent.did);
      const answer = await paidCall(caller, { operation: 'echo', args: { text: 'hello', units: 3 } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const data = answer.body.data;
      assert.deepEqual(data.result, { echo: { text: 'hello', units: 3 } });
      assert.equal(data.cost, '0.003000');
      assert.equal(data.units, '3');
      assert.equal(data.status, 'succeeded');
      assert.deepEqual(await market.ledger.account(caller.did), { ...(await market.ledger.account(caller.did)), balance: '9.997000', held: '0.000000' });
      const after = await market.ledger.account(market.identity.agent.did);
      assert.equal(micros(after.balance) - micros(before.balance), 3000n);
      const capture = await market.ledger.receipt(data.settlement_seq);
      assert.equal(capture.kind, 'capture');
      assert.equal(capture.amount, '0.003000');
      assert.equal(capture.hold_id, data.hold_id);
      const read = await market.call('GET', `/v1/invocations/${data.invocation_id}`, { caller });
      assert.equal(read.status, 200);
      assert.deepEqual(read.body.data.result, data.result);
      assert.equal(read.body.data.settlement_seq, data.settlement_seq);
      const seen = world.provider.calls.find((call) => call.body.invocation_id === data.invocation_id);
      assert.equal(seen?.body.caller_did, caller.did);
      const signed = `${providerCallDomain}${data.invocation_id}\n${createHash('sha256')
        .update(seen?.raw ?? '')
        .digest('hex')}`;
      const marketplaceKey = publicKeyFromHex(market.identity.agent.publicKeyHex) as NonNullable<ReturnType<typeof publicKeyFromHex>>;
      assert.equal(verifyMessage(marketplaceKey, signed, seen?.signature ?? ''), true, 'the provider can check the call came from the marketplace');
      assert.equal(verifyMessage(marketplaceKey, `${signed}x`, seen?.signature ?? ''), false);
    });

    test('the receipt is EIP-712, signed by the marketplace, binding digests, amount and the settlement seq; viem alone verifies it', async () => {
      const caller = await fundedCaller();
      const paid = await paidCall(caller, { operation: 'echo', args: { units: 2 } });
      const answer = await market.call('GET', `/v1/receipts/${paid.body.data.invocation_id}`, { caller });
      assert.equal(answer.status, 200);
      const receipt = answer.body.data;
      assert.equal(receipt.final, true);
      assert.equal(receipt.message.amount, '2000');
      assert.equal(receipt.message.settlementSeq, paid.body.data.settlement_seq);
      assert.equal(receipt.message.requestDigest, paid.body.data.request_digest);
      const message = {
        ...receipt.message,
        units: BigInt(receipt.message.units),
        amount: BigInt(receipt.message.amount),
        settlementSeq: BigInt(receipt.message.settlementSeq),
        startedAt: BigInt(receipt.message.startedAt),
        finishedAt: BigInt(receipt.message.finishedAt),
      };
      const check = (signature: Hex, changed = message) =>
        verifyTypedData({ address: receipt.signer, domain: receipt.domain, types: receipt.types, primaryType: 'Receipt', message: changed, signature });
      assert.equal(await check(receipt.signature), true);
      assert.equal(await check(receipt.signature, { ...message, amount: 1n }), false, 'another amount does not verify');
      assert.equal(
        (await market.call('GET', `/v1/receipts/${paid.body.data.invocation_id}`, { caller: await market.caller() })).status,
        404,
        'another caller cannot read it',
      );
    });

    test('a provider that fails, times out or answers outside its schema costs nothing: 503 and the hold released', async () => {
      const caller = await fundedCaller('1');
      for (const operation of ['fail', 'slow', 'bad']) {
        const answer = await paidCall(caller, { operation, args: {} });
        assert.equal(answer.status, 503, operation);
        assert.equal(answer.body.error, 'service_unavailable');
        assert.equal(answer.body.detail.charged, '0.000000');
        assert.ok(['provider_error', 'provider_timeout', 'provider_bad_answer'].includes(answer.body.detail.reason));
      }
      assert.deepEqual(await market.ledger.account(caller.did), { ...(await market.ledger.account(caller.did)), balance: '1.000000', held: '0.000000' });
    });

    test('racing retries with one Idempotency-Key and one payment are served once and charged once', async () => {
      const caller = await fundedCaller();
      const body = { operation: 'echo', args: { units: 1, text: 'race' } };
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body });
      const wire = payTerms(caller.key, challenge.body.detail.terms);
      const headers = { 'idempotency-key': 'race-1', 'x-ledger-payment': wire };
      const answers = await Promise.all(Array.from({ length: 6 }, () => market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers })));
      const succeeded = answers.filter((answer) => answer.status === 200);
      assert.ok(succeeded.length >= 1);
      for (const answer of answers)
        assert.ok(answer.status === 200 || (answer.status === 409 && answer.body.detail.retryable === true), JSON.stringify(answer.body));
      assert.equal(new Set(succeeded.map((answer) => answer.body.data.invocation_id)).size, 1);
      const replay = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers });
      assert.deepEqual(replay.body.data, succeeded[0]?.body.data, 'a later replay answers the original');
      assert.equal((await market.ledger.account(caller.did)).balance, '9.999000');
      assert.equal(world.provider.calls.filter((call) => call.body.args.text === 'race' && call.body.caller_did === caller.did).length, 1);
      const other = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body: { ...body, args: { units: 2 } }, headers });
      assert.equal(other.status, 409, 'the same key with another request is refused');
    });

    test('payments that do not fit the terms are refused with 402 and the reason; nothing moves', async () => {
      const caller = await fundedCaller();
      const body = { operation: 'echo', args: { text: 'unfit' } };
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body });
      const terms = challenge.body.detail.terms;
      // The honest payment with its signature spoiled: the marketplace leaves the signature to settlement.
      const honest = payTerms(caller.key, terms);
      const forged = forgedIntent(honest);
      const cases: Array<[string, string]> = [
        ['payment_wrong_amount', payTerms(caller.key, { ...terms, amount: '0.001000' })],
        ['payment_wrong_ref', payTerms(caller.key, { ...terms, ref: `0x${'0'.repeat(64)}` })],
        ['payment_not_callers', payTerms(generateAgentKey(), terms)],
        ['payment_malformed', 'not-a-payment'],
        ['payment_invalid', forged],
      ];
      for (const [reason, wire] of cases) {
        const answer = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers: { 'x-ledger-payment': wire } });
        assert.equal(answer.status, 402, reason);
        assert.equal(answer.body.detail.reason, reason);
      }
      const poor = await market.caller(generateAgentKey());
      const refused = await paidCall(poor, body);
      assert.equal(refused.status, 402, 'settlement refuses a hold without funds');
      assert.match(refused.body.message, /settlement refused the hold/);
      assert.equal((await market.ledger.account(caller.did)).balance, '10.000000');
      const unfitCalls = () => world.provider.calls.filter((call) => call.body.args.text === 'unfit' && call.body.caller_did === caller.did).length;
      assert.equal(unfitCalls(), 0, 'no provider was called');
      // The forged payment left nothing behind: the honest one, with the same nonce (the same key), is served.
      const paid = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers: { 'x-ledger-payment': honest } });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      assert.equal(unfitCalls(), 1);
    });

    test('quotes are signed (EIP-712), cap the call, and expire with quote_expired naming the quote', async () => {
      const caller = await fundedCaller();
      const quoted = await market.call('POST', `/v1/quote/${serviceId}`, { caller, body: { operation: 'echo', estimated_units: '4' } });
      assert.equal(quoted.status, 200);
      const quote = quoted.body.data;
      assert.equal(quote.unit_price_settle, '0.001000');
      assert.equal(quote.max_total_settle, '0.004000');
      const valid = await verifyTypedData({
        address: quote.signer,
        domain: marketplaceDomain(quote.domain.chainId),
        types: quoteTypes,
        primaryType: 'Quote',
        message: {
          quoteId: `0x${quote.quote_id.replaceAll('-', '').padStart(64, '0')}`,
          serviceId: `0x${serviceId.replaceAll('-', '').padStart(64, '0')}`,
          operation: 'echo',
          caller: caller.did,
          unitPrice: 1000n,
          estimatedUnits: 4n,
          maxTotal: 4000n,
          pricingVersion: BigInt(quote.pricing_version),
          expiresAt: BigInt(Date.parse(quote.expires_at) / 1000),
        },
        signature: quote.signature,
      });
      assert.equal(valid, true);
      const paid = await paidCall(caller, { operation: 'echo', args: { units: 9 }, quote_id: quote.quote_id });
      assert.equal(paid.status, 200);
      assert.equal(paid.body.data.cap, '0.004000');
      assert.equal(paid.body.data.cost, '0.004000', 'nine units reported, the quote caps it at four');
      const later = await market.call('POST', `/v1/quote/${serviceId}`, { caller, body: { operation: 'echo', estimated_units: '1' } });
      market.clock.advance(301_000);
      const expired = await market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body: { operation: 'echo', args: {}, quote_id: later.body.data.quote_id },
      });
      assert.equal(expired.status, 410);
      assert.equal(expired.body.error, 'quote_expired');
      assert.equal(expired.body.detail.quote_id, later.body.data.quote_id);
      market.clock.set(new Date());
    });

    test('the spec’s other body form: input and payment {rail, intent}', async () => {
      const caller = await fundedCaller();
      const body = { operation: 'echo', input: { text: 'form two' } };
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body: { ...body, payment: { rail: 'hold' } } });
      assert.equal(challenge.status, 402);
      const wire = payTerms(caller.key, challenge.body.detail.terms);
      const answer = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body: { ...body, payment: { rail: 'hold', intent: wire } } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.data.result, { echo: { text: 'form two' } });
      for (const bad of [
        { args: {}, input: {} },
        { input: {}, payment: { rail: 'card' } },
        { input: {}, payment: 'x' },
      ]) {
        const refused = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body: { operation: 'echo', ...bad } });
        assert.equal(refused.status, 400, JSON.stringify(bad));
        assert.equal(refused.body.error, 'invalid_request');
      }
    });

    test('caller mistakes: unknown service 404, unknown operation and args outside the schema 400, no caller token 401', async () => {
      const caller = await fundedCaller();
      assert.equal((await market.call('POST', '/v1/invoke/not-a-uuid', { caller, body: { operation: 'echo' } })).status, 404);
      assert.equal(
        (await market.call('POST', `/v1/invoke/${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}`, { caller, body: { operation: 'echo' } })).status,
        404,
      );
      const unknown = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body: { operation: 'nope' } });
      assert.equal(unknown.status, 400);
      const badArgs = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body: { operation: 'echo', args: { units: 'many' } } });
      assert.equal(badArgs.status, 400);
      assert.equal(badArgs.body.detail.field, 'args');
      const anonymous = await market.call('POST', `/v1/invoke/${serviceId}`, { body: { operation: 'echo' } });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error, 'unauthorized');
    });
  });
}

describe('settlement out of reach', () => {
  test('a paid call is 503 payment_unavailable, the provider is not called, and the key is free for a retry', async () => {
    const engine = testEngines()[0] as NonNullable<ReturnType<typeof testEngines>[0]>;
    const market = await startMarketplace(engine, { clock: new ManualClock(new Date()), env: { MARKETPLACE_SETTLEMENT_URL: 'http://127.0.0.1:1' } });
    try {
      const serviceId = await seedActiveListing(market.database.db, providerManifest(world.provider.url));
      const caller = await market.caller(generateAgentKey());
      const body = { operation: 'echo', args: { text: 'unreachable' } };
      const headers = { 'idempotency-key': 'while-settlement-is-down' };
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body, headers });
      const answer = await market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body,
        headers: { ...headers, 'x-ledger-payment': payTerms(caller.key, challenge.body.detail.terms) },
      });
      assert.equal(answer.status, 503);
      assert.equal(answer.body.error, 'payment_unavailable');
      assert.equal(answer.body.detail.reason, 'settlement_unavailable');
      assert.equal(world.provider.calls.filter((call) => call.body.args.text === 'unreachable').length, 0);
      assert.equal(await market.deps.payments.desk.invocations.byKey(caller.did, headers['idempotency-key']), undefined, 'nothing claimed');
    } finally {
      await market.close();
    }
  });
});
