import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { ManualClock } from '@platform/testkit/manual-clock';
import { base64url } from 'jose';
import { type IdentityProvider, startIdentityProvider, startRouter } from './harness.ts';

const [pglite] = testEngines();

describe('identity-provider JWTs on the public routes', () => {
  let idp: IdentityProvider;
  let other: IdentityProvider;
  let router: Awaited<ReturnType<typeof startRouter>>;
  const clock = new ManualClock(new Date());

  before(async () => {
    idp = await startIdentityProvider();
    other = await startIdentityProvider();
    router = await startRouter(pglite!, idp, { clock });
  });
  after(async () => {
    await router?.dispose();
    await idp?.close();
    await other?.close();
  });

  const me = (token: string | null) => router.call('GET', '/v/me', token);

  test('a valid token names its user; health and version need none', async () => {
    const sub = randomUUID();
    const answer = await me(await idp.token({ sub }));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json.data, { user_id: sub, state: null, invited: false, handle: null });
    assert.equal((await router.call('GET', '/healthz', null)).status, 200);
    assert.deepEqual((await router.call('GET', '/v/version', null)).json.data.service, 'router');
  });

  test('refused: no token, expired, another issuer, another audience, a tampered signature, a non-UUID subject', async () => {
    const missing = await me(null);
    assert.deepEqual([missing.status, missing.json.error.code], [401, 'unauthorized']);
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer');
    const cases: [string, Promise<string>, RegExp][] = [
      ['expired', idp.token({ expiresIn: -120 }), /the token has expired/],
      ['another issuer', other.token(), /signed with a key the identity provider does not publish|iss/],
      ['another audience', idp.token({ edit: (_header, payload) => (payload.aud = 'someone-else') }), /aud/],
      ['not a UUID subject', idp.token({ edit: (_header, payload) => (payload.sub = 'auth0|12345') }), /not a user id/],
    ];
    for (const [name, token, reason] of cases) {
      const answer = await me(await token);
      assert.equal(answer.status, 401, name);
      assert.match(answer.json.error.message, reason, name);
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/, name);
    }
    // Same key, right claims, another issuer URL in the token: the issuer check refuses it.
    const foreignIssuer = await me(await idp.token({ edit: (_header, payload) => (payload.iss = other.url) }));
    assert.match(foreignIssuer.json.error.message, /iss/);
    const [header, payload, signature] = (await idp.token()).split('.');
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload as string)));
    const forged = `${header}.${base64url.encode(JSON.stringify({ ...claims, sub: randomUUID() }))}.${signature}`;
    assert.match((await me(forged)).json.error.message, /signature does not verify/);
    assert.match((await me('not.a.jwt')).json.error.message, /malformed|not valid/);
  });

  test('credentials come before the body: an invite redemption without a valid token is 401 whatever its body', async () => {
    const forged = `${(await idp.token()).slice(0, -4)}AAAA`;
    const bodies: (string | undefined)[] = [undefined, '', '{}', '{"code":""}', '{"code":7}', '{"unknown":true}', '{not json'];
    for (const bearer of [null, forged])
      for (const body of bodies) {
        const init = body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } };
        const answer = await router.call('POST', '/v/invites/redeem', bearer, init);
        assert.deepEqual([answer.status, answer.json?.error.code], [401, 'unauthorized'], `${bearer === null ? 'no token' : 'a forged token'}, body ${body}`);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
    const unsupported = await router.call('POST', '/v/invites/redeem', null, { body: 'code=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(unsupported.status, 401, 'nor is its content type looked at first');
    const signedIn = await router.call('POST', '/v/invites/redeem', await idp.token(), { body: '{}' });
    assert.deepEqual([signedIn.status, signedIn.json.error.code], [400, 'invalid_request'], 'with a token, the body is checked');
  });

  test('algorithms outside the allow-list are refused: none, and HS256 signed with the public key', async () => {
    const claims = base64url.encode(JSON.stringify({ iss: idp.url, aud: 'platform-test', sub: randomUUID(), exp: Math.floor(Date.now() / 1000) + 600 }));
    const none = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${claims}.`;
    assert.equal((await me(none)).status, 401);
    const { createHmac } = await import('node:crypto');
    const [key] = idp.server.issuer.keys.toJSON();
    const header = base64url.encode(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: key?.kid }));
    const mac = base64url.encode(createHmac('sha256', JSON.stringify(key)).update(`${header}.${claims}`).digest());
    const confused = await me(`${header}.${claims}.${mac}`);
    assert.equal(confused.status, 401);
    assert.match(confused.json.error.message, /algorithm is not allowed/);
  });

  test('a rotated key: a token with a new kid is accepted once the keys are fetched again (at most every 10 s)', async () => {
    const rotated = await idp.server.issuer.keys.generate('RS256');
    const token = await idp.token({ kid: rotated.kid });
    const early = await me(token);
    assert.equal(early.status, 401, 'the keys were fetched moments ago');
    clock.advance(11_000);
    const later = await me(token);
    assert.equal(later.status, 200, later.text);
    assert.equal((await me(await idp.token({ kid: rotated.kid }))).status, 200);
  });

  test('an identity provider that cannot be reached: 503 with Retry-After on every signed-in route, never 500 or 401', async () => {
    const gone = await startIdentityProvider();
    const url = gone.url;
    await gone.close();
    const stranded = await startRouter(pglite!, undefined, { env: { IDP_URL: url, ROUTER_IDP_AUDIENCE: 'platform-test' } });
    try {
      for (const [method, path] of [
        ['GET', '/v/me'],
        ['POST', '/v/invites/redeem'],
        ['GET', '/me'],
      ] as const) {
        const answer = await stranded.call(method, path, await idp.token());
        assert.deepEqual([answer.status, answer.json.error.code, answer.headers.get('retry-after')], [503, 'unavailable', '2'], `${method} ${path}`);
        assert.match(answer.json.error.message, /identity provider cannot be reached/);
      }
      const signIn = await stranded.call('GET', '/console/config.json', null);
      assert.deepEqual([signIn.status, signIn.headers.get('retry-after')], [503, '2'], 'nor can the console learn where to sign in');
    } finally {
      await stranded.dispose();
    }
  });

  test('without IDP_URL the authenticated routes answer 503 naming it; health still answers', async () => {
    const open = await startRouter(pglite!, undefined);
    try {
      const answer = await open.call('GET', '/anything', 'whatever');
      assert.deepEqual([answer.status, answer.json.error.code, answer.json.error.retryable], [503, 'unavailable', false]);
      assert.match(answer.json.error.message, /set IDP_URL/);
      assert.equal((await open.call('GET', '/healthz', null)).status, 200);
    } finally {
      await open.dispose();
    }
  });
});
