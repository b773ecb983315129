import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { createSiweMessage } from 'viem/siwe';
import { newAccount, signIn, signInMessage, testManifest, walletHeaders } from './developer-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

for (const engine of testEngines()) {
  describe(`developer sign-in on ${engine.name}`, () => {
    let m: Marketplace;
    before(async () => {
      m = await startMarketplace(engine);
    });
    after(async () => m.close());

    const createWith = (headers: Record<string, string>) => m.call('POST', '/v1/services', { headers, body: { manifest: testManifest() } });
    const auth = (message: string, signature: string) => m.call('POST', '/v1/developers/auth', { body: { message, signature } });

    test('the nonce comes with the EIP-4361 message to sign, for this domain and chain, valid 300 s', async () => {
      const nonce = await m.call('POST', '/v1/developers/nonce');
      assert.equal(nonce.status, 200, JSON.stringify(nonce.body));
      const data = nonce.body.data;
      assert.match(data.nonce, /^[0-9a-f]{32}$/);
      assert.equal(data.domain, m.config.siweDomain);
      assert.equal(data.chain_id, m.config.eip712ChainId);
      assert.ok(data.message_template.startsWith(`${m.config.siweDomain} wants you to sign in with your Ethereum account:\n{address}\n`));
      assert.ok(data.message_template.includes(`Nonce: ${data.nonce}`));
      assert.equal(data.expires_at, new Date(m.clock.now().getTime() + 300_000).toISOString());
      assert.equal(data.message, undefined, 'no address, no filled-in message');
    });

    test('a signed message becomes an X-Developer-Token that registry calls accept', async () => {
      const developer = await signIn(m);
      assert.match(developer.token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      const created = await createWith(developer.headers);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.data.owner_address, developer.address);
      const row = await m.database.db.selectFrom('developers').selectAll().where('address', '=', developer.address).executeTakeFirst();
      assert.ok(row, 'the developer is recorded');
    });

    test('a message signed by another wallet is refused and does not burn the nonce', async () => {
      const account = newAccount();
      const message = await signInMessage(m, account);
      const wrong = await auth(message, await newAccount().signMessage({ message }));
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error, 'unauthorized');
      assert.match(wrong.body.message, /not made by/);
      const right = await auth(message, await account.signMessage({ message }));
      assert.equal(right.status, 200, 'the nonce is still good for its owner');
      assert.equal(right.body.data.address, account.address);
    });

    test('a nonce signs in once: the replay is refused', async () => {
      const account = newAccount();
      const message = await signInMessage(m, account);
      const signature = await account.signMessage({ message });
      assert.equal((await auth(message, signature)).status, 200);
      const replay = await auth(message, signature);
      assert.equal(replay.status, 401);
      assert.match(replay.body.message, /unknown, already used or expired/);
    });

    test('a stale message (issued more than 300 s ago) is refused', async () => {
      const account = newAccount();
      const message = await signInMessage(m, account);
      const signature = await account.signMessage({ message });
      m.clock.advance(301_000);
      const stale = await auth(message, signature);
      assert.equal(stale.status, 401);
      assert.match(stale.body.message, /Issued At/);
    });

    test('a message for another domain or chain, or an invented nonce, is refused', async () => {
      const account = newAccount();
      const nonce = (await m.call('POST', '/v1/developers/nonce')).body.data.nonce as string;
      const base = { address: account.address, nonce, uri: `http://${m.config.siweDomain}`, version: '1' as const, issuedAt: m.clock.now() };
      for (const [fields, reason] of [
        [{ domain: 'evil.example.com', chainId: m.config.eip712ChainId }, /signs in to evil\.example\.com/],
        [{ domain: m.config.siweDomain, chainId: 1 }, /names chain 1/],
        [{ domain: m.config.siweDomain, chainId: m.config.eip712ChainId, nonce: 'a'.repeat(32) }, /unknown, already used or expired/],
      ] as const) {
        const message = createSiweMessage({ ...base, ...fields });
        const refused = await auth(message, await account.signMessage({ message }));
        assert.equal(refused.status, 401, message);
        assert.match(refused.body.message, reason);
      }
    });

    test('something that is not a sign-in message is 400', async () => {
      const refused = await auth('hello', `0x${'11'.repeat(65)}`);
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error, 'invalid_request');
    });

    test('expired, tampered and foreign tokens are refused with 401', async () => {
      const developer = await signIn(m);
      const [payload, mac] = developer.token.split('.') as [string, string];
      const flipped = `${payload.slice(0, -2)}${payload.at(-2) === 'A' ? 'B' : 'A'}${payload.at(-1)}.${mac}`;
      const caller = await m.caller();
      for (const token of [flipped, `${payload}.${mac.slice(1)}`, caller.token, 'nonsense', `${payload}.${mac}.x`]) {
        const refused = await createWith({ 'x-developer-token': token });
        assert.equal(refused.status, 401, token);
        assert.equal(refused.body.error, 'unauthorized');
      }
      m.clock.advance(12 * 3600 * 1000 + 1000);
      const expired = await createWith(developer.headers);
      assert.equal(expired.status, 401);
      assert.match(expired.body.message, /expired/);
    });

    test('no credentials is 401 before the body is looked at', async () => {
      const bare = await m.call('POST', '/v1/services', { body: { nonsense: true } });
      assert.equal(bare.status, 401);
      assert.match(bare.body.message, /X-Developer-Token/);
    });
  });

  describe(`Authorization: Wallet on ${engine.name}`, () => {
    let m: Marketplace;
    before(async () => {
      m = await startMarketplace(engine);
    });
    after(async () => m.close());

    const body = JSON.stringify({ manifest: testManifest(), slug: undefined });
    const post = (headers: Record<string, string>, payload = body, url = '/v1/services') => m.call('POST', url, { headers, body: payload });

    test('a request signed by the wallet is accepted as that developer', async () => {
      const account = newAccount();
      const created = await post(await walletHeaders(m, account, { method: 'POST', url: '/v1/services', body }));
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.data.owner_address, account.address);
      const id = created.body.data.id as string;
      const url = `/v1/services/${id}/publish`;
      const published = await m.call('POST', url, { headers: await walletHeaders(m, account, { method: 'POST', url }) });
      assert.equal(published.status, 200, JSON.stringify(published.body));
      assert.equal(published.body.data.status, 'active');
    });

    test('the same signed request twice: the replay is refused', async () => {
      const headers = await walletHeaders(m, newAccount(), { method: 'POST', url: '/v1/services', body });
      assert.equal((await post(headers)).status, 201);
      const replay = await post(headers);
      assert.equal(replay.status, 401);
      assert.match(replay.body.message, /already used/);
    });

    test('a timestamp outside ±60 s is refused', async () => {
      const account = newAccount();
      const headers = await walletHeaders(m, account, { method: 'POST', url: '/v1/services', body });
      m.clock.advance(61_000);
      const stale = await post(headers);
      assert.equal(stale.status, 401);
      assert.match(stale.body.message, /X-Wallet-Timestamp/);
      const future = Math.floor(m.clock.now().getTime() / 1000) + 120;
      const early = await post(await walletHeaders(m, account, { method: 'POST', url: '/v1/services', body }, { timestamp: future }));
      assert.equal(early.status, 401);
    });

    test('another body, path or method than the one signed is refused', async () => {
      const account = newAccount();
      const headers = await walletHeaders(m, account, { method: 'POST', url: '/v1/services', body });
      const other = JSON.stringify({ manifest: testManifest({ summary: 'something else' }) });
      assert.equal((await post(headers, other)).status, 401);
      // The same bytes re-spelled (another key order) are another body too: the signature covers bytes, not meaning.
      const respelled = JSON.stringify(JSON.parse(body), null, 1);
      assert.equal((await post(await walletHeaders(m, account, { method: 'POST', url: '/v1/services', body }), respelled)).status, 401);
      const elsewhere = await walletHeaders(m, account, { method: 'POST', url: '/v1/services?x=1', body });
      assert.equal((await post(elsewhere)).status, 401);
    });

    test('a signature by another wallet than X-Wallet-Address names is refused', async () => {
      const headers = await walletHeaders(m, newAccount(), { method: 'POST', url: '/v1/services', body });
      const refused = await post({ ...headers, 'x-wallet-address': newAccount().address });
      assert.equal(refused.status, 401);
      assert.match(refused.body.message, /not made by/);
    });

    test('malformed wallet headers are refused', async () => {
      const headers = await walletHeaders(m, newAccount(), { method: 'POST', url: '/v1/services', body });
      for (const broken of [
        { authorization: 'Wallet 0x1234' } as Record<string, string>,
        { 'x-wallet-address': 'me' },
        { 'x-wallet-timestamp': 'yesterday' },
        { 'x-wallet-nonce': 'short' },
      ]) {
        const refused = await post({ ...headers, ...broken });
        assert.equal(refused.status, 401, JSON.stringify(broken));
      }
    });
  });
}
