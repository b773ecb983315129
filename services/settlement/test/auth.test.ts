import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { deriveTokenKey, mintPrincipalToken } from '@platform/kit/auth/principal-token';
import type { SettlementIntent } from '@platform/kit/settlement-intent';
import { testEngines } from '@platform/testkit/databases';
import { agentAuthSecret, operatorToken, type Settlement, signedIntent, startSettlement } from './harness.ts';

const engine = testEngines()[0];
const fleetToken = 'fleet-token';
const publicReads = ['/', '/healthz', '/v1/info', '/v1/supply', '/v1/batches', '/v1/transfers', '/v1/checkpoint'];
const principalCalls: Array<['GET' | 'POST', string, unknown]> = [
  ['GET', '/v1/balance', undefined],
  ['GET', '/v1/deposit', undefined],
  ['POST', '/v1/account/evm', { address: `0x${'1'.repeat(40)}`, signature: `0x${'1'.repeat(130)}` }],
  ['POST', '/v1/pay', { to: 'did:platform:bob:0123456789abcdef', amount: '1' }],
  ['POST', '/v1/hold', { to: 'did:platform:bob:0123456789abcdef', amount: '1' }],
  ['POST', '/v1/hold/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/capture', {}],
  ['POST', '/v1/hold/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/release', {}],
  ['POST', '/v1/hold/batch/settle', { items: [{ hold_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', action: 'release' }] }],
  ['POST', '/v1/withdraw', { amount: '1' }],
  ['POST', '/v1/settle', undefined],
  ['POST', '/v1/dev/faucet', { amount: '1' }],
];

describe(`authorization on ${engine?.name}`, () => {
  let s: Settlement;
  before(async () => {
    // Intents are checked on the worker thread here, as the service process checks them (the harness's default is inline).
    s = await startSettlement(engine as NonNullable<typeof engine>, { transportToken: fleetToken, intentWorker: true });
  });
  after(async () => s.close());

  test('public reads and the auth lane never need the fleet token or a principal', async () => {
    for (const url of publicReads) {
      const response = await s.call('GET', url);
      assert.notEqual(response.status, 401, url);
    }
    const challenge = await s.call('POST', '/v1/agent/auth/challenge', { body: { did: generateAgentKey().did } });
    assert.equal(challenge.status, 200);
    assert.match(challenge.body.data.message, /^platform-settlement-auth:/);
  });

  test('every principal route: no fleet token 401, fleet token without principal 401, bad principal 401', async () => {
    const key = deriveTokenKey('another-secret', 'settlement');
    const forged = mintPrincipalToken(key, { did: 'did:platform:bob:0123456789abcdef', owner: 'bob', expiresAt: 4_000_000_000 });
    const schedulerToken = mintPrincipalToken(deriveTokenKey(agentAuthSecret, 'scheduler'), {
      did: 'did:platform:bob:0123456789abcdef',
      owner: 'bob',
      expiresAt: 4_000_000_000,
    });
    const agent = await s.agent();
    for (const [method, url, body] of principalCalls) {
      const noFleet = await s.call(method, url, { body, token: agent.token });
      assert.equal(noFleet.status, 401, `${method} ${url} without the fleet token`);
      const wrongFleet = await s.call(method, url, { body, token: agent.token, bearer: 'wrong' });
      assert.equal(wrongFleet.status, 401, `${method} ${url} with a wrong fleet token`);
      const noPrincipal = await s.call(method, url, { body, bearer: fleetToken });
      assert.equal(noPrincipal.status, 401, `${method} ${url} without a principal`);
      assert.equal(noPrincipal.body.error?.code, 'unauthorized');
      for (const token of [forged, schedulerToken, 'garbage']) {
        const bad = await s.call(method, url, { body, bearer: fleetToken, token });
        assert.equal(bad.status, 401, `${method} ${url} with a token this service did not mint`);
      }
    }
    const ok = await s.call('GET', '/v1/balance', { bearer: fleetToken, token: agent.token });
    assert.equal(ok.status, 200);
  });

  test('an expired principal token is refused', async () => {
    const agent = await s.agent();
    s.clock.advance(2 * 86_400_000);
    const response = await s.call('GET', '/v1/balance', { bearer: fleetToken, token: agent.token });
    assert.equal(response.status, 401);
  });

  describe('signed intents', () => {
    async function payer() {
      const agent = await s.agent();
      const faucet = await s.call('POST', '/v1/dev/faucet', { bearer: fleetToken, token: agent.token, body: { amount: '50' } });
      assert.equal(faucet.status, 200);
      return agent;
    }
    const intent = (from: Awaited<ReturnType<typeof payer>>, terms: Partial<SettlementIntent> = {}) => signedIntent(from.key, s.clock.now(), terms);

    test('an intent alone authorises a pay, hold or withdraw of its terms; its nonce is single use', async () => {
      const from = await payer();
      const signed = intent(from);
      const paid = await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: signed.wire } });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      assert.deepEqual([paid.body.data.receipt.from, paid.body.data.receipt.to, paid.body.data.receipt.amount], [from.did, signed.terms.to, '5.000000']);
      const replay = await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: signed.wire } });
      assert.equal(replay.status, 401);
      assert.match(replay.body.error?.message ?? '', /nonce/);
      const hold = intent(from, { purpose: 'hold' });
      assert.equal((await s.call('POST', '/v1/hold', { bearer: fleetToken, body: { intent: hold.wire, expires_in_seconds: 60 } })).status, 200);
      assert.equal((await s.call('GET', '/v1/balance', { bearer: fleetToken, token: from.token })).body.data.balance, '40.000000');
    });

    test('a replay with the same idempotency key returns the original result instead of a nonce error', async () => {
      const from = await payer();
      const signed = intent(from);
      const first = await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: signed.wire, idempotency_key: 'intent-1' } });
      const again = await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: signed.wire, idempotency_key: 'intent-1' } });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body.data, first.body.data);
    });

    test('a refused movement does not burn the nonce', async () => {
      const from = await payer();
      const signed = intent(from, { amount: '500' });
      assert.equal((await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: signed.wire } })).status, 409);
      await s.call('POST', '/v1/dev/faucet', { bearer: fleetToken, token: from.token, body: { amount: '500' } });
      assert.equal((await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: signed.wire } })).status, 200);
    });

    test('refusals: expired, wrong purpose, tampered, malformed, body disagreeing, token of another DID', async () => {
      const from = await payer();
      const expired = intent(from, { expiry: new Date(s.clock.now().getTime() - 1).toISOString() });
      assert.equal((await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: expired.wire } })).status, 401);
      const wrongPurpose = intent(from, { purpose: 'withdraw', to: from.did });
      assert.equal((await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: wrongPurpose.wire } })).status, 401);
      const tooFar = intent(from, { expiry: new Date(s.clock.now().getTime() + 2 * 3_600_000).toISOString() });
      assert.equal((await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: tooFar.wire } })).status, 401);
      const good = intent(from);
      const decoded = JSON.parse(Buffer.from(good.wire, 'base64url').toString('utf8'));
      decoded.intent.amount = '50';
      const tampered = Buffer.from(JSON.stringify(decoded)).toString('base64url');
      // The intent's own faults carry a reason, so a service that handed the caller's intent on can say whose fault it was.
      for (const wire of [tampered, 'not-base64url!']) {
        const refused = await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: wire } });
        assert.equal(refused.status, 401);
        assert.equal(refused.body.error?.reason, 'intent_invalid', JSON.stringify(refused.body));
      }
      const disagree = await s.call('POST', '/v1/pay', { bearer: fleetToken, body: { intent: good.wire, amount: '6' } });
      assert.equal(disagree.status, 400);
      const stranger = await s.agent();
      const mixed = await s.call('POST', '/v1/pay', { bearer: fleetToken, token: stranger.token, body: { intent: good.wire } });
      assert.equal(mixed.status, 403);
      assert.equal((await s.call('POST', '/v1/pay', { bearer: fleetToken, token: from.token, body: { intent: good.wire, amount: '5' } })).status, 200);
    });
  });

  test('operator deposits: own token, idempotent on (tx_hash, log_index), a changed replay is a 409', async () => {
    const agent = await s.agent();
    const body = { did: agent.did, amount: '7.5', tx_hash: `0x${'c'.repeat(64)}`, log_index: 3 };
    assert.equal((await s.call('POST', '/v1/operator/deposits', { body })).status, 401);
    assert.equal((await s.call('POST', '/v1/operator/deposits', { body, bearer: fleetToken })).status, 401);
    const first = await s.call('POST', '/v1/operator/deposits', { body, bearer: operatorToken });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.data.replayed, false);
    const replay = await s.call('POST', '/v1/operator/deposits', {
      body: { ...body, tx_hash: body.tx_hash.toUpperCase().replace('0X', '0x') },
      bearer: operatorToken,
    });
    assert.equal(replay.status, 200);
    assert.equal(replay.body.data.replayed, true);
    assert.equal(replay.body.data.deposit.seq, first.body.data.deposit.seq);
    assert.equal((await s.call('POST', '/v1/operator/deposits', { body: { ...body, amount: '8' }, bearer: operatorToken })).status, 409);
    assert.equal((await s.call('POST', '/v1/operator/deposits', { body: { ...body, log_index: 4 }, bearer: operatorToken })).status, 200);
    assert.equal((await s.call('GET', `/v1/account/${agent.did}`)).body.data.balance, '15.000000');
    assert.equal((await s.call('POST', '/v1/operator/deposits', { body: { ...body, tx_hash: '0x12' }, bearer: operatorToken })).status, 400);
  });

  test('the operator route checks its bearer before the body (an empty body without it is 401), and says so in /openapi.json', async () => {
    for (const body of [undefined, {}, { did: 'nobody' }]) {
      for (const bearer of [undefined, fleetToken]) {
        const refused = await s.call('POST', '/v1/operator/deposits', { body, ...(bearer ? { bearer } : {}) });
        assert.deepEqual([refused.status, refused.body.error?.code], [401, 'unauthorized'], JSON.stringify(body));
      }
    }
    assert.equal((await s.call('POST', '/v1/operator/deposits', { body: {}, bearer: operatorToken })).status, 400, 'with the token, the body is read');
    const document = (await s.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.deepEqual(document.paths['/v1/operator/deposits'].post.security, [{ operatorBearer: [] }]);
    assert.deepEqual(document.components.securitySchemes.operatorBearer, { type: 'http', scheme: 'bearer', description: 'SETTLEMENT_OPERATOR_TOKEN' });
  });
});

describe('without SETTLEMENT_DEV, operator token or fleet token', () => {
  let s: Settlement;
  before(async () => {
    s = await startSettlement(engine as NonNullable<typeof engine>, {
      dev: false,
      rates: { auth: { perSecond: 1, burst: 2 }, read: { perSecond: 0.5, burst: 3 }, write: { perSecond: 0.5, burst: 4 } },
    });
  });
  after(async () => s.close());

  test('the faucet does not exist', async () => {
    const agent = await s.agent();
    assert.equal((await s.call('POST', '/v1/dev/faucet', { token: agent.token, body: { amount: '1' } })).status, 404);
  });

  test('per-IP token buckets per class answer 429 rate_limited with Retry-After, other addresses and classes unaffected', async () => {
    const reads = [];
    for (let i = 0; i < 4; i++) reads.push(await s.call('GET', '/v1/info', { remoteAddress: '10.0.0.1' }));
    assert.deepEqual(
      reads.map((r) => r.status),
      [200, 200, 200, 429],
    );
    assert.equal(reads[3]?.body.error?.code, 'rate_limited');
    assert.equal(reads[3]?.body.error?.retryable, true);
    assert.equal(reads[3]?.headers['retry-after'], '2');
    assert.equal((await s.call('GET', '/v1/info', { remoteAddress: '10.0.0.2' })).status, 200);
    assert.equal((await s.call('POST', '/v1/agent/auth/challenge', { remoteAddress: '10.0.0.1', body: { did: generateAgentKey().did } })).status, 200);
    s.clock.advance(2_000);
    assert.equal((await s.call('GET', '/v1/info', { remoteAddress: '10.0.0.1' })).status, 200);
    assert.equal((await s.call('GET', '/healthz', { remoteAddress: '10.0.0.1' })).status, 200, 'health is never limited');
  });

  test('a batch spends a write token per item: one over what is left is 429 and spends none of it', async () => {
    const agent = await s.agent();
    const holds = (count: number) =>
      s.call('POST', '/v1/hold/batch', {
        remoteAddress: '10.0.0.4',
        token: agent.token,
        body: { items: Array.from({ length: count }, () => ({ to: generateAgentKey().did, amount: '1' })) },
      });
    const tooMany = await holds(5);
    assert.deepEqual([tooMany.status, tooMany.body.error?.code, tooMany.headers['retry-after']], [429, 'rate_limited', '2']);
    const fits = await holds(3);
    assert.equal(fits.status, 200, 'read: its items answer on their own (no funds here)');
    assert.equal(fits.body.data.results.length, 3);
    assert.equal((await holds(1)).status, 429);
  });
});

describe('rate limits and the fleet token', () => {
  let s: Settlement;
  const fleetToken = 'fleet-token-for-rate-limit-test';
  before(async () => {
    s = await startSettlement(engine as NonNullable<typeof engine>, { transportToken: fleetToken, rates: { read: { perSecond: 0.5, burst: 2 } } });
  });
  after(async () => s.close());

  test('requests with the fleet LEDGER_TOKEN are not limited per address; the same address without it is', async () => {
    const fleet = [];
    for (let i = 0; i < 5; i++) fleet.push((await s.call('GET', '/v1/info', { remoteAddress: '10.0.0.9', bearer: fleetToken })).status);
    assert.deepEqual(fleet, [200, 200, 200, 200, 200]);
    const strangers = [];
    for (let i = 0; i < 3; i++) strangers.push((await s.call('GET', '/v1/info', { remoteAddress: '10.0.0.9', bearer: 'not-the-fleet-token' })).status);
    assert.deepEqual(strangers, [200, 200, 429]);
  });
});
