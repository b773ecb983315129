import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { cleanEnv, limitMs, platform, runToExit, upLimitMs, waitForLine, within } from './platform-process.ts';

/** `platform up` until its last line; answers the table's URLs by name and a way to stop it (exit 0 asserted). */
async function up(dataDir: string) {
  // Its own local chain port: the contract engine uses a node it finds already answering, and platform.test.ts's
  // `up` (on the default 8545) may run at the same time and stop its node under this one.
  const env = cleanEnv({ DATA_DIR: dataDir, PORT: '0', SCHEDULER_DISPATCHER: 'false', CONTRACTS_LOCAL_RPC_URL: 'http://127.0.0.1:18546' });
  const child: ChildProcess = platform(['up'], env);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const stdout: string[] = [];
  await within(waitForLine(child, /npx platform delegate/, stdout), upLimitMs, 'platform up').catch((error: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${error.message}\n${stdout.join('\n')}\n${stderr}`);
  });
  const url = (name: string) => (stdout.find((line) => line.startsWith(`${name} `)) ?? '').split(/\s{2,}/)[1] as string;
  return {
    url,
    stdout,
    async stop() {
      child.kill('SIGTERM');
      const [code] = await within(exited, limitMs, 'platform up to stop').finally(() => child.kill('SIGKILL'));
      assert.equal(code, 0, stderr);
    },
    kill: () => child.kill('SIGKILL'),
  };
}

const get = (url: string, token?: string) => fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});

test('platform up runs a development identity provider: platform token gives the development user a token the router takes to their daemon; forged, expired and missing tokens are refused; the token survives a restart', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dev-identity-up-'));
  let platformUp = await up(dataDir);
  try {
    const userId = (JSON.parse(readFileSync(join(dataDir, 'identity', 'user.json'), 'utf8')) as { id: string }).id;
    const issued = await runToExit(['token'], cleanEnv({ DATA_DIR: dataDir }));
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
    await platformUp.stop();
    platformUp = await up(dataDir);
    const again = await get(`${platformUp.url('router')}/me`, token);
    assert.equal(again.status, 200);
    assert.equal(((await again.json()) as { data: { user_id: string } }).data.user_id, userId);
    await platformUp.stop();
  } finally {
    platformUp.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('platform token without a platform that ran in DATA_DIR exits 1 with one line', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'dev-identity-none-'));
  try {
    const { code, stdout, stderr } = await runToExit(['token'], cleanEnv({ DATA_DIR: dataDir }));
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /no development identity provider has run in/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
