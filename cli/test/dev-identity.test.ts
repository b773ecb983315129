import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { createLogger } from '@platform/kit/logger';
import { ManualClock } from '@platform/testkit/manual-clock';
import { runPlatform } from '@platform/testkit/run-command';
import { decodeProtectedHeader, SignJWT } from 'jose';
import { JwtVerifier } from '../../services/router/src/auth/jwt-verifier.ts';
import { devAudience } from '../src/dev-identity/dev-client.ts';
import { startDevIdentity } from '../src/dev-identity/dev-provider.ts';
import { requestDevToken } from '../src/dev-identity/request-token.ts';
import { routerIdentitySettings, start, withConsoleOrigins } from '../src/dev-identity/up-identity.ts';
import { readyMessage } from '../src/ready-message.ts';
import { findService } from '../src/services.ts';
import { serviceEnv, withPlannedAddresses } from '../src/up.ts';

const clientSecret = 'client-secret-'.padEnd(43, 'x');
const cookieKey = 'cookie-key-'.padEnd(43, 'y');

/** The router's own check (services/router/src/auth/jwt-verifier.ts), as the router configured by `up` runs it. */
function routerVerifier(url: string, clock = new ManualClock(new Date())) {
  const settings = { url, issuer: undefined, audience: devAudience, algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'], leewaySeconds: 30 };
  return { clock, verifier: new JwtVerifier(settings, clock, createLogger({ level: 'silent', service: 'test' })) };
}

describe('the development identity provider', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dev-identity-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('issues the development user a token the router accepts, keeps its key and user owner-only, and comes back the same after a restart', async () => {
    const first = await startDevIdentity({ dir, port: 0, clientSecret, cookieKey });
    let token: string;
    try {
      assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'loopback only');
      assert.match(first.userId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      token = await requestDevToken(first.url, clientSecret);
      assert.equal(decodeProtectedHeader(token).alg, 'ES256');
      const { verifier } = routerVerifier(first.url);
      const verified = await verifier.verify(token);
      assert.ok(verified.ok, JSON.stringify(verified));
      assert.equal(verified.userId, first.userId);
      assert.ok(Math.abs(verified.expiresAt - (Date.now() / 1000 + 3600)) < 60, 'an hour');
      for (const file of ['signing-key.json', 'user.json', 'url']) assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600, file);
      assert.equal(statSync(dir).mode & 0o777, 0o700);
    } finally {
      await first.stop();
    }
    // One turn of the event loop, so this process's fetch sees its kept-alive sockets closed before it asks again.
    await setImmediate();
    // A restart: same key, same user, same address (the issuer its tokens name), so the earlier token still verifies.
    const second = await startDevIdentity({ dir, port: 0, clientSecret, cookieKey });
    try {
      assert.deepEqual([second.url, second.userId], [first.url, first.userId]);
      const { verifier } = routerVerifier(second.url);
      assert.equal((await verifier.verify(token)).ok, true);
    } finally {
      await second.stop();
    }
  });

  test('answers GET /healthz 200 like every row of the ready table (it answered 404), HEAD too', async () => {
    const identity = await startDevIdentity({ dir, port: 0, clientSecret, cookieKey });
    try {
      const answer = await fetch(`${identity.url}/healthz`);
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { ok: true, data: { status: 'ok', issuer: identity.url } });
      const head = await fetch(`${identity.url}/healthz?probe=1`, { method: 'HEAD' });
      assert.deepEqual([head.status, await head.text()], [200, '']);
      assert.equal((await fetch(`${identity.url}/healthz`, { method: 'POST' })).status, 404, 'only a read');
    } finally {
      await identity.stop();
    }
  });

  test('the router refuses a forged token, an expired one and one for another audience; a wrong client secret gets no token', async () => {
    const identity = await startDevIdentity({ dir, port: 0, clientSecret, cookieKey });
    try {
      const token = await requestDevToken(identity.url, clientSecret);
      const { kid } = decodeProtectedHeader(token);
      const claims = { sub: identity.userId, scope: 'platform' };
      const sign = (key: KeyObject, audience: string, exp: number) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256', kid: kid as string })
          .setIssuer(identity.url)
          .setAudience(audience)
          .setIssuedAt()
          .setExpirationTime(exp)
          .sign(key);
      const now = Math.floor(Date.now() / 1000);
      const forged = await sign(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, devAudience, now + 600);
      const { verifier, clock } = routerVerifier(identity.url);
      assert.deepEqual(await verifier.verify(forged), { ok: false, reason: 'the signature does not verify' });
      const persisted = JSON.parse(readFileSync(join(dir, 'signing-key.json'), 'utf8'));
      const key = createPrivateKey({ key: persisted, format: 'jwk' });
      assert.equal((await verifier.verify(await sign(key, devAudience, now + 600))).ok, true, 'the persisted key is the one it signs with');
      assert.deepEqual(await verifier.verify(await sign(key, 'urn:another:api', now + 600)), { ok: false, reason: "the token's aud claim is not accepted" });
      clock.set(new Date(Date.now() + 3_700_000));
      assert.deepEqual(await verifier.verify(token), { ok: false, reason: 'the token has expired' }, 'an hour and the leeway later');
      await assert.rejects(requestDevToken(identity.url, 'wrong'.padEnd(43, 'z')), /invalid_client/);
    } finally {
      await identity.stop();
    }
  });
});

describe('platform up and the development identity provider', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dev-identity-up-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('up never runs it in production, nor when IDP_URL names a provider; the router then starts without it', () => {
    const entry = findService('identity');
    assert.equal(entry?.runsUnder?.({ DATA_DIR: dir, NODE_ENV: 'production' }), false);
    assert.equal(entry?.runsUnder?.({ DATA_DIR: dir, IDP_URL: 'https://idp.example' }), false);
    assert.equal(entry?.runsUnder?.({ DATA_DIR: dir }), true);
    assert.ok(findService('router')?.after.includes('identity'), 'the router waits for it when it runs');
  });

  test('started without its derived secrets it refuses, naming them (nothing written)', async () => {
    await assert.rejects(start({ DATA_DIR: join(dir, 'no-secrets'), PORT: '0' }), /IDENTITY_CLIENT_SECRET and IDENTITY_COOKIE_KEY are required/);
    assert.equal(existsSync(join(dir, 'no-secrets')), false);
  });

  test('the router is wired to it unless IDP_URL is set, and only the router', () => {
    const identity = { name: 'identity', url: 'http://127.0.0.1:8444', links: { audience: devAudience } };
    assert.deepEqual(routerIdentitySettings(identity), {
      IDP_URL: 'http://127.0.0.1:8444',
      ROUTER_IDP_AUDIENCE: devAudience,
      ROUTER_CONSOLE_SCOPE: 'platform',
    });
    assert.equal(serviceEnv({}, 'router', [identity]).IDP_URL, 'http://127.0.0.1:8444');
    assert.equal(serviceEnv({ IDP_URL: 'https://idp.example' }, 'router', [identity]).IDP_URL, 'https://idp.example');
    assert.equal(serviceEnv({}, 'daemon', [identity]).IDP_URL, undefined);
  });

  test('the console client is sent back to the router only: its origins follow where the router will listen', async () => {
    const fixedPort = await withConsoleOrigins({ ROUTER_PORT: '9443' });
    assert.equal(fixedPort.IDENTITY_CONSOLE_ORIGINS, 'http://127.0.0.1:9443,http://localhost:9443');
    assert.equal((await withConsoleOrigins({})).IDENTITY_CONSOLE_ORIGINS, 'http://127.0.0.1:8443,http://localhost:8443');
    assert.equal(
      (await withConsoleOrigins({ PORT: '9000' })).IDENTITY_CONSOLE_ORIGINS,
      'http://127.0.0.1:8443,http://localhost:8443',
      'PORT is not the router’s',
    );
    const free = await withConsoleOrigins({ PORT: '0' });
    assert.match(free.ROUTER_PORT ?? '', /^[1-9]\d+$/, 'a free port is fixed for the router before it starts');
    assert.equal(free.IDENTITY_CONSOLE_ORIGINS, `http://127.0.0.1:${free.ROUTER_PORT},http://localhost:${free.ROUTER_PORT}`);
    assert.equal(
      (await withConsoleOrigins({ ROUTER_ADDR: '[::1]:9001' })).IDENTITY_CONSOLE_ORIGINS,
      'http://127.0.0.1:9001,http://localhost:9001,http://[::1]:9001',
    );
    assert.equal((await withConsoleOrigins({ HOST: '0.0.0.0', ROUTER_PORT: '9443' })).IDENTITY_CONSOLE_ORIGINS, 'http://127.0.0.1:9443,http://localhost:9443');
    for (const env of [{ NODE_ENV: 'production' }, { IDP_URL: 'https://idp.example' }])
      assert.equal((await withConsoleOrigins(env)).IDENTITY_CONSOLE_ORIGINS, undefined, JSON.stringify(env));
  });

  test('the router reads settlement and the marketplace for the console without waiting for the marketplace to start', async () => {
    const settlement = { name: 'settlement', url: 'http://127.0.0.1:9097' };
    const fixed = await withPlannedAddresses({ PORT: '0' });
    assert.match(fixed.MARKETPLACE_PORT ?? '', /^[1-9]\d+$/);
    const router = serviceEnv(fixed, 'router', [settlement]);
    assert.equal(router.ROUTER_MARKETPLACE_URL, `http://127.0.0.1:${fixed.MARKETPLACE_PORT}`);
    assert.equal(router.ROUTER_SETTLEMENT_URL, 'http://127.0.0.1:9097');
    assert.equal(serviceEnv(fixed, 'marketplace').PORT, fixed.MARKETPLACE_PORT, 'the marketplace listens where the router was told');
    assert.deepEqual(await withPlannedAddresses({}), {});
    assert.equal(serviceEnv({}, 'router', []).ROUTER_MARKETPLACE_URL, 'http://127.0.0.1:9098');
    assert.equal(serviceEnv({ ROUTER_MARKETPLACE_URL: 'https://market.example' }, 'router', []).ROUTER_MARKETPLACE_URL, 'https://market.example');
  });

  test('the ready message: with it, the router is configured and the last two lines talk through it with platform token', () => {
    const rows = [
      { name: 'daemon', url: 'http://127.0.0.1:8080', dataLocation: 'files' },
      { name: 'router', url: 'http://127.0.0.1:8443', dataLocation: 'PGlite' },
    ];
    const withIdentity = readyMessage({ DATA_DIR: '/srv/p' }, [...rows, { name: 'identity', url: 'http://127.0.0.1:8444', dataLocation: 'files' }]).split('\n');
    assert.ok(!withIdentity.some((line) => /router\s+no identity provider/.test(line)));
    assert.deepEqual(withIdentity.slice(-2), [
      '  export DAEMON_URL=http://127.0.0.1:8443 PLATFORM_DAEMON_TOKEN=$(DATA_DIR=/srv/p npx platform token)',
      '  npx platform delegate "what can you do?"',
    ]);
    const without = readyMessage({}, rows).split('\n');
    assert.ok(without.some((line) => /router\s+no identity provider: set IDP_URL/.test(line)));
    assert.match(without.at(-2) ?? '', /DAEMON_URL=http:\/\/127\.0\.0\.1:8080 PLATFORM_DAEMON_TOKEN=\$\(npx platform secret PLATFORM_DAEMON_TOKEN\)/);
  });
});

test('platform token without a platform that ran in DATA_DIR exits 1 with one line', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'dev-identity-none-'));
  try {
    const { code, stdout, stderr } = await runPlatform(['token'], { env: { DATA_DIR: dataDir } });
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /no development identity provider has run in/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
