import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { NonceStore } from '@platform/kit/auth/nonce-store';
import { deriveTokenKey, mintPrincipalToken } from '@platform/kit/auth/principal-token';
import { testEngines } from '@platform/testkit/databases';
import { agentAuthSecret, type Scheduler, startScheduler } from './harness.ts';

const userId = '8F1C2D3E-4A5B-4C6D-8E9F-0A1B2C3D4E5F';

for (const engine of testEngines()) {
  describe(`scheduler auth on ${engine.name}`, () => {
    let s: Scheduler;
    before(async () => {
      s = await startScheduler(engine);
    });
    after(() => s.close());

    async function challenge(did: string) {
      const response = await s.call('POST', '/v1/agent/auth/challenge', { body: { did } });
      assert.equal(response.status, 200);
      return response.body.data as { nonce: string; message: string };
    }

    describe('transport bearer', () => {
      test('GET / and GET /healthz need no bearer', async () => {
        const root = await s.call('GET', '/', { bearer: null });
        assert.deepEqual(root, { status: 200, body: { ok: true, data: { service: 'scheduler', version: '0.1.0', health: '/healthz' } } });
        const health = await s.call('GET', '/healthz', { bearer: null });
        assert.deepEqual(health.body, { ok: true, data: { status: 'ok', version: '0.1.0', db: true } });
      });
      test('a missing bearer is 401 unauthorized on the handshake and alarm routes', async () => {
        for (const [method, url] of [
          ['POST', '/v1/agent/auth/challenge'],
          ['POST', '/v1/agent/auth/verify'],
          ['GET', '/v1/alarms'],
          ['POST', '/v1/alarms'],
        ] as const) {
          const response = await s.call(method, url, { bearer: null, body: {} });
          assert.equal(response.status, 401, url);
          assert.equal(response.body.error?.code, 'unauthorized');
        }
      });
      test('a wrong bearer is 401, a right bearer with a malformed scheme is 401', async () => {
        assert.equal((await s.call('POST', '/v1/agent/auth/challenge', { bearer: 'test-transport-tokeX', body: { did: 'x' } })).status, 401);
        const basic = await s.call('POST', '/v1/agent/auth/challenge', { bearer: null, headers: { authorization: 'Basic test-transport-token' }, body: {} });
        assert.equal(basic.status, 401);
      });
      test('the bearer alone does not reach an alarm: the principal token is required too', async () => {
        const response = await s.call('GET', '/v1/alarms');
        assert.equal(response.status, 401);
        assert.match(response.body.error?.message ?? '', /X-Scheduler-Agent/);
      });
      test('the principal token alone does not reach an alarm: the bearer is required too', async () => {
        const { token } = await s.agent();
        assert.equal((await s.call('GET', '/v1/alarms', { token, bearer: null })).status, 401);
        assert.equal((await s.call('GET', '/v1/alarms', { token })).status, 200);
      });
    });

    describe('challenge', () => {
      test('returns a 24-byte base64url nonce bound to the DID, the prefixed message and 120 s', async () => {
        const key = generateAgentKey(userId);
        const response = await s.call('POST', '/v1/agent/auth/challenge', { body: { did: key.did } });
        const data = response.body.data;
        assert.equal(data.did, key.did);
        assert.match(data.nonce, /^[A-Za-z0-9_-]{32}$/);
        assert.equal(Buffer.from(data.nonce, 'base64url').length, 24);
        assert.equal(data.message, `platform-scheduler-auth:${key.did}:${data.nonce}`);
        assert.equal(data.expires_in, 120);
      });
      test('a malformed DID is 400 invalid_request', async () => {
        for (const did of ['did:platform:abc:0123', 'did:other:u:0123456789abcdef', 'did:platform::0123456789abcdef', '']) {
          const response = await s.call('POST', '/v1/agent/auth/challenge', { body: { did } });
          assert.equal(response.status, 400, did);
          assert.equal(response.body.error?.code, 'invalid_request');
        }
      });
      test('a missing did or a non-JSON body is 400', async () => {
        assert.equal((await s.call('POST', '/v1/agent/auth/challenge', { body: {} })).status, 400);
        const raw = await s.app.inject({
          method: 'POST',
          url: '/v1/agent/auth/challenge',
          headers: { authorization: 'Bearer test-transport-token', 'content-type': 'application/json' },
          payload: '{"did":',
        });
        assert.equal(raw.statusCode, 400);
        assert.equal(raw.json().error.code, 'invalid_request');
      });
    });

    describe('verify', () => {
      test('a correct signature yields a token, the lowercase owner and 86400 s', async () => {
        const key = generateAgentKey(userId);
        const { nonce, message } = await challenge(key.did);
        const response = await s.call('POST', '/v1/agent/auth/verify', {
          body: { did: key.did, public_key: key.publicKeyHex, nonce, signature: key.sign(message) },
        });
        assert.equal(response.status, 200);
        assert.equal(response.body.data.owner_user_id, userId.toLowerCase());
        assert.equal(response.body.data.expires_in, 86400);
        assert.equal((await s.call('GET', '/v1/alarms', { token: response.body.data.token })).status, 200);
      });

      const refusals: Array<[string, (k: ReturnType<typeof generateAgentKey>, c: { nonce: string; message: string }) => Record<string, string>]> = [
        [
          'a public key that is not 32 bytes of hex',
          (k, c) => ({ did: k.did, public_key: k.publicKeyHex.slice(2), nonce: c.nonce, signature: k.sign(c.message) }),
        ],
        ['a public key that is not hex', (k, c) => ({ did: k.did, public_key: 'z'.repeat(64), nonce: c.nonce, signature: k.sign(c.message) })],
        ['a bad signature', (k, c) => ({ did: k.did, public_key: k.publicKeyHex, nonce: c.nonce, signature: k.sign(`${c.message}x`) })],
        [
          'a signature over another service prefix',
          (k, c) => ({
            did: k.did,
            public_key: k.publicKeyHex,
            nonce: c.nonce,
            signature: k.sign(c.message.replace('platform-scheduler-auth', 'platform-settlement-auth')),
          }),
        ],
        [
          'an unknown nonce',
          (k) => {
            const nonce = 'A'.repeat(32);
            return { did: k.did, public_key: k.publicKeyHex, nonce, signature: k.sign(`platform-scheduler-auth:${k.did}:${nonce}`) };
          },
        ],
      ];
      for (const [name, build] of refusals) {
        test(`${name} is 401 unauthorized`, async () => {
          const key = generateAgentKey();
          const response = await s.call('POST', '/v1/agent/auth/verify', { body: build(key, await challenge(key.did)) });
          assert.equal(response.status, 401);
          assert.equal(response.body.error?.code, 'unauthorized');
        });
      }

      test('a key whose fingerprint is not the DID keyfp is 401, even with a valid signature by that key', async () => {
        const owner = generateAgentKey();
        const intruder = generateAgentKey();
        const { nonce, message } = await challenge(owner.did);
        const response = await s.call('POST', '/v1/agent/auth/verify', {
          body: { did: owner.did, public_key: intruder.publicKeyHex, nonce, signature: intruder.sign(message) },
        });
        assert.equal(response.status, 401);
        assert.match(response.body.error?.message ?? '', /fingerprint/);
      });

      test('a nonce is single use: the second verify is 401', async () => {
        const key = generateAgentKey();
        const { nonce, message } = await challenge(key.did);
        const body = { did: key.did, public_key: key.publicKeyHex, nonce, signature: key.sign(message) };
        const [first, second] = await Promise.all([s.call('POST', '/v1/agent/auth/verify', { body }), s.call('POST', '/v1/agent/auth/verify', { body })]);
        assert.deepEqual([first.status, second.status].sort(), [200, 401]);
      });

      test('a nonce issued to another DID is 401 and stays usable by its own DID', async () => {
        const owner = generateAgentKey();
        const other = generateAgentKey();
        const { nonce, message } = await challenge(owner.did);
        const stolen = `platform-scheduler-auth:${other.did}:${nonce}`;
        const response = await s.call('POST', '/v1/agent/auth/verify', {
          body: { did: other.did, public_key: other.publicKeyHex, nonce, signature: other.sign(stolen) },
        });
        assert.equal(response.status, 401);
        const own = await s.call('POST', '/v1/agent/auth/verify', {
          body: { did: owner.did, public_key: owner.publicKeyHex, nonce, signature: owner.sign(message) },
        });
        assert.equal(own.status, 200);
      });

      test('a nonce expires after 120 s', async () => {
        const key = generateAgentKey();
        const early = await challenge(key.did);
        const late = await challenge(key.did);
        s.clock.advance(119_000);
        const body = (c: { nonce: string; message: string }) => ({
          did: key.did,
          public_key: key.publicKeyHex,
          nonce: c.nonce,
          signature: key.sign(c.message),
        });
        assert.equal((await s.call('POST', '/v1/agent/auth/verify', { body: body(early) })).status, 200);
        s.clock.advance(1_000);
        assert.equal((await s.call('POST', '/v1/agent/auth/verify', { body: body(late) })).status, 401);
      });

      test('a DID that is malformed after a valid signature is 400 invalid_request', async () => {
        const key = generateAgentKey();
        const did = `did:platform:${'x'}:${key.publicKeyHex.slice(0, 15)}`;
        const nonce = 'B'.repeat(32);
        const response = await s.call('POST', '/v1/agent/auth/verify', {
          body: { did, public_key: key.publicKeyHex, nonce, signature: key.sign(`platform-scheduler-auth:${did}:${nonce}`) },
        });
        assert.equal(response.status, 400);
        assert.equal(response.body.error?.code, 'invalid_request');
      });

      test('missing fields are 400', async () => {
        const response = await s.call('POST', '/v1/agent/auth/verify', { body: { did: generateAgentKey().did } });
        assert.equal(response.status, 400);
      });

      test('expired nonces are purged', async () => {
        const nonces = new NonceStore(s.database.db, s.clock);
        await nonces.purgeExpired();
        const key = generateAgentKey();
        await challenge(key.did);
        s.clock.advance(121_000);
        await challenge(key.did);
        assert.equal(await nonces.purgeExpired(), 1);
        assert.equal(await nonces.purgeExpired(), 0);
      });
    });

    describe('principal token on alarm routes', () => {
      test('an expired token is 401 with the reason', async () => {
        const { token } = await s.agent();
        s.clock.advance(86_399_000);
        assert.equal((await s.call('GET', '/v1/alarms', { token })).status, 200);
        s.clock.advance(1_000);
        const response = await s.call('GET', '/v1/alarms', { token });
        assert.equal(response.status, 401);
        assert.match(response.body.error?.message ?? '', /expired/);
      });
      test('tampered, malformed and foreign tokens are 401 with the reason in the message', async () => {
        const { key, token } = await s.agent();
        const [payload, mac] = token.split('.') as [string, string];
        const forged = Buffer.from(`${key.did}|someone-else|9999999999`).toString('base64url');
        const settlementToken = mintPrincipalToken(deriveTokenKey(agentAuthSecret, 'settlement'), { did: key.did, owner: 'o', expiresAt: 9_999_999_999 });
        const otherSecret = mintPrincipalToken(deriveTokenKey('another-secret', 'scheduler'), { did: key.did, owner: 'o', expiresAt: 9_999_999_999 });
        const cases: Array<[string, RegExp]> = [
          ['', /missing/],
          [payload, /payload\.mac/],
          [`${payload}.${mac}.x`, /payload\.mac/],
          [`${payload}.${mac.slice(0, -2)}!!`, /base64url/],
          [`${forged}.${mac}`, /signature/],
          [settlementToken, /signature/],
          [otherSecret, /signature/],
        ];
        for (const [presented, reason] of cases) {
          const response = await s.call('GET', '/v1/alarms', { token: presented });
          assert.equal(response.status, 401, presented);
          assert.equal(response.body.error?.code, 'unauthorized');
          assert.match(response.body.error?.message ?? '', reason);
        }
      });
      test('surrounding whitespace is trimmed', async () => {
        const { token } = await s.agent();
        assert.equal((await s.call('GET', '/v1/alarms', { token: `  ${token}\t` })).status, 200);
      });
      test('a token minted by another instance with the same secret is accepted (stateless)', async () => {
        const key = generateAgentKey(userId);
        const token = mintPrincipalToken(deriveTokenKey(agentAuthSecret, 'scheduler'), {
          did: key.did,
          owner: userId.toLowerCase(),
          expiresAt: Math.floor(s.clock.now().getTime() / 1000) + 60,
        });
        assert.equal((await s.call('GET', '/v1/alarms', { token })).status, 200);
      });
    });
  });

  describe(`scheduler open mode and health on ${engine.name}`, () => {
    test('an empty transport token opens every path', async () => {
      const s = await startScheduler(engine, { transportToken: '' });
      try {
        const { token } = await s.agent();
        assert.equal((await s.call('GET', '/v1/alarms', { token, bearer: null })).status, 200);
      } finally {
        await s.close();
      }
    });
    test('GET /healthz is 503 with db:false when the database is down', async () => {
      const s = await startScheduler(engine);
      await s.database.close();
      const response = await s.call('GET', '/healthz', { bearer: null });
      assert.equal(response.status, 503);
      assert.equal(response.body.ok, false);
      assert.deepEqual((response.body as { data: unknown }).data, { status: 'unavailable', version: '0.1.0', db: false });
      await s.app.close();
      await s.receiver.close();
    });
  });
}
