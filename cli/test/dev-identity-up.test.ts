import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import { startPlatform } from '@platform/testkit/platform-up';
import { runPlatform } from '@platform/testkit/run-command';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';

const get = (url: string, token?: string) => fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});

test('platform up runs a development identity provider: platform token gives the development user a token the router takes to their daemon; forged, expired and missing tokens are refused; the token survives a restart', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dev-identity-up-'));
  // One chain port for both starts (the engine's node state lives in the folder).
  const env = { SCHEDULER_DISPATCHER: 'false', CONTRACTS_LOCAL_RPC_URL: `http://127.0.0.1:${await freePort()}` };
  let platformUp = await startPlatform({ dataDir, env });
  try {
    const userId = (JSON.parse(readFileSync(join(dataDir, 'identity', 'user.json'), 'utf8')) as { id: string }).id;
    const issued = await platformUp.run(['token']);
    assert.equal(issued.code, 0, issued.stderr);
    const token = issued.stdout.trim();
    assert.equal(issued.stdout, `${token}\n`, 'only the token on stdout');

    // Through the router to the development user's own daemon: they hold a redeemed invite, so the first request provisions them.
    const router = platformUp.url('router');
    const me = await get(`${router}/me`, token);
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { data: { user_id: string } }).data.user_id, userId);
    const account = (await (await get(`${router}/v/me`, token)).json()) as { data: { user_id: string; state: string; invited: boolean } };
    assert.deepEqual(account.data, { ...account.data, user_id: userId, state: 'active', invited: true });

    // Refused: no token, another key under the provider's key id, and the provider's own key past the expiry.
    const { kid } = decodeProtectedHeader(token);
    const { iss } = decodeJwt(token);
    const sign = (key: KeyObject, exp: number) =>
      new SignJWT({ sub: userId })
        .setProtectedHeader({ alg: 'ES256', kid: kid as string })
        .setIssuer(iss as string)
        .setAudience('urn:platform:router')
        .setExpirationTime(exp)
        .sign(key);
    const now = Math.floor(Date.now() / 1000);
    const providerKey = createPrivateKey({ key: JSON.parse(readFileSync(join(dataDir, 'identity', 'signing-key.json'), 'utf8')), format: 'jwk' });
    for (const [what, bad] of [
      ['no token', undefined],
      ['a forged token', await sign(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, now + 600)],
      ['an expired token', await sign(providerKey, now - 3600)],
    ] as const) {
      const refused = await get(`${router}/me`, bad);
      assert.equal(refused.status, 401, what);
      assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer/, what);
    }

    // A restart on the same folder: same signing key, same issuer, same user, so the token still opens their daemon.
    assert.equal(await platformUp.stop(), 0);
    platformUp = await startPlatform({ dataDir, env });
    const again = await get(`${platformUp.url('router')}/me`, token);
    assert.equal(again.status, 200);
    assert.equal(((await again.json()) as { data: { user_id: string } }).data.user_id, userId);
    assert.equal(await platformUp.stop(), 0);
  } finally {
    await platformUp.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('platform token without a platform that ran in DATA_DIR exits 1 with one line', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dev-identity-none-'));
  try {
    const { code, stdout, stderr } = await runPlatform(['token'], { env: { DATA_DIR: dataDir } });
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /no development identity provider has run in/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
