import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { daemonTokenFor } from '@platform/kit/auth/daemon-token';
import type { RunningPlatform } from '@platform/testkit/platform-up';
import { platformBin } from '@platform/testkit/run-command';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { derivedValue, rootSecret } from '../src/platform-secrets.ts';

/*
 * Checks of a running `platform up` that the platform-up tests share: what a first start must refuse, and what a
 * person pasting the printed lines gets. Each reads the platform's own data folder and talks to it over HTTP only.
 */

const wrong = { authorization: 'Bearer wrong-credentials-0123456789' };

/** A failure as any of the three envelopes spells it. */
type Refusal = { ok?: boolean; error?: string | { code?: string; type?: string; retryable?: boolean }; message?: unknown };

/** The kit's failure envelope; the marketplace's (`{error: <code>, message, detail}`); the gateway's (OpenAI's). */
const envelopes = {
  kit: (body: Refusal) => body.ok === false && typeof body.error === 'object' && body.error.code === 'unauthorized' && body.error.retryable === false,
  marketplace: (body: Refusal) => body.ok === false && body.error === 'unauthorized' && typeof body.message === 'string',
  openai: (body: Refusal) => typeof body.error === 'object' && body.error.code === 'unauthorized' && body.error.type === 'authentication_error',
} as const;

/**
 * One protected route of each service (from its README), asked without credentials and with a wrong bearer: each is
 * 401 in that service's envelope. The router's internal listener is at `routerInternal` (the test fixes its address).
 */
export async function assertProtectedRoutesRefuse(platform: RunningPlatform, routerInternal: string): Promise<void> {
  const routes: [string, string, string, keyof typeof envelopes][] = [
    ['GET', `${platform.url('scheduler')}/v1/alarms`, 'scheduler', 'kit'],
    ['GET', `${platform.url('settlement')}/v1/balance`, 'settlement', 'kit'],
    ['GET', `${platform.url('marketplace')}/v1/me/spend`, 'marketplace', 'marketplace'],
    ['GET', `${platform.url('gateway')}/v1/models`, 'gateway', 'openai'],
    ['POST', `${platform.url('memory')}/v1/recall`, 'memory', 'kit'],
    ['GET', `${platform.url('contracts')}/v1/chains`, 'contract engine', 'kit'],
    ['GET', `${platform.url('connector')}/v1/connectors`, 'connector', 'kit'],
    ['GET', `${platform.url('router')}/v/me`, 'router (public)', 'kit'],
    ['POST', `${routerInternal}/internal/wake`, 'router (internal wake)', 'kit'],
    ['GET', `${routerInternal}/admin/users/018f0000-0000-7000-8000-000000000000`, 'router (admin)', 'kit'],
    ['GET', `${platform.url('daemon')}/me`, 'daemon', 'kit'],
  ];
  for (const [method, url, service, envelope] of routes)
    for (const [what, headers] of [
      ['no credentials', {}],
      ['a wrong bearer', wrong],
    ] as const) {
      const body =
        method === 'POST' ? { body: '{"query":"x"}', headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': 'k' } } : { headers };
      const answer = await fetch(url, { method, ...body });
      const text = await answer.text();
      assert.equal(answer.status, 401, `${service} ${method} ${url} with ${what}: ${text}`);
      assert.ok(envelopes[envelope](JSON.parse(text)), `${service} answers in its envelope: ${text}`);
    }
}

/**
 * The daemon `up` runs holds its own user's bearer (as the router derives each user's), not the router's root:
 * `platform secret PLATFORM_DAEMON_TOKEN` opens it, and neither the root nor the router-derived bearer of another
 * user does. Returns the bearer.
 */
export async function assertDaemonHoldsItsUsersBearer(platform: RunningPlatform): Promise<string> {
  const root = derivedValue('PLATFORM_DAEMON_TOKEN', rootSecret({ DATA_DIR: platform.dataDir }, { create: false }).key) as string;
  const bearer = await platform.secret('PLATFORM_DAEMON_TOKEN');
  assert.notEqual(bearer, root, 'platform secret prints the daemon’s bearer, not the root');
  const me = (token: string) => fetch(`${platform.url('daemon')}/me`, { headers: { authorization: `Bearer ${token}` } });
  const mine = await me(bearer);
  assert.equal(mine.status, 200);
  const { user_id: userId } = ((await mine.json()) as { data: { user_id: string } }).data;
  assert.equal(bearer, daemonTokenFor(root)(userId));
  assert.equal((await me(root)).status, 401, 'the root does not open the daemon `up` runs');
  assert.equal((await me(daemonTokenFor(root)(`${userId}-other`))).status, 401, 'another user’s bearer does not open it');
  return bearer;
}

/**
 * With no model provider behind the gateway, a chat to the daemon is a prompt 503 naming the gateway's setting,
 * and the two lines `up` printed to paste, run as printed by a shell (`npx platform` being this checkout's
 * `platform`), delegate through the router to the user's daemon and fail with the same message.
 */
export async function assertNoModelProviderIsNamed(platform: RunningPlatform, daemonBearer: string): Promise<void> {
  const named = 'the gateway has no model provider: set GATEWAY_UPSTREAM_URL on the gateway';
  const chat = await fetch(`${platform.url('daemon')}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemonBearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'hello' }),
  });
  const text = await chat.text();
  assert.equal(chat.status, 503, text);
  assert.deepEqual(JSON.parse(text).error, { code: 'unavailable', message: named, retryable: false, reason: 'upstream_not_configured' });

  const stdout = platform.output().stdout.split('\n');
  const start = stdout.indexOf('talk to your agent through the router (in another terminal; a token lasts an hour):');
  assert.ok(start >= 0, 'the ready message ends with the lines to paste');
  const pasted = await shell([`npx() { shift; "${process.execPath}" "${platformBin}" "$@"; }`, ...stdout.slice(start + 1, start + 3)].join('\n'));
  assert.equal(pasted.code, 1, pasted.stderr);
  assert.match(pasted.stderr, /^intent [0-9a-f]+$/m, 'the router took the token and the user’s daemon took the intent');
  assert.ok(pasted.stderr.includes(`platform delegate: failed: ${named}`), pasted.stderr);
}

const get = (url: string, token?: string) => fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});

/**
 * The development identity provider `up` runs: `platform token` prints (alone on stdout) a token of the development
 * user that the router takes to their own daemon (they hold a redeemed invite, so the first request provisions them);
 * no token, a token signed by another key under the provider's key id, and the provider's own token past its expiry
 * are each 401 with a Bearer challenge. Returns the token and the user, for a check after a restart.
 */
export async function assertDevelopmentIdentity(platform: RunningPlatform): Promise<{ token: string; userId: string }> {
  const userId = (JSON.parse(readFileSync(join(platform.dataDir, 'identity', 'user.json'), 'utf8')) as { id: string }).id;
  const issued = await platform.run(['token']);
  assert.equal(issued.code, 0, issued.stderr);
  const token = issued.stdout.trim();
  assert.equal(issued.stdout, `${token}\n`, 'only the token on stdout');
  await assertTokenOpensDaemon(platform, token, userId);
  const account = (await (await get(`${platform.url('router')}/v/me`, token)).json()) as { data: { user_id: string; state: string; invited: boolean } };
  assert.deepEqual(account.data, { ...account.data, user_id: userId, state: 'active', invited: true });

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
  const providerKey = createPrivateKey({ key: JSON.parse(readFileSync(join(platform.dataDir, 'identity', 'signing-key.json'), 'utf8')), format: 'jwk' });
  for (const [what, bad] of [
    ['no token', undefined],
    ['a forged token', await sign(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, now + 600)],
    ['an expired token', await sign(providerKey, now - 3600)],
  ] as const) {
    const refused = await get(`${platform.url('router')}/me`, bad);
    assert.equal(refused.status, 401, what);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer/, what);
  }
  return { token, userId };
}

/** The router takes `token` to the daemon of `userId` (after a restart too: same signing key, issuer and user). */
export async function assertTokenOpensDaemon(platform: RunningPlatform, token: string, userId: string): Promise<void> {
  const me = await get(`${platform.url('router')}/me`, token);
  assert.equal(me.status, 200);
  assert.equal(((await me.json()) as { data: { user_id: string } }).data.user_id, userId);
}

async function shell(script: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn('/bin/sh', ['-c', script], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}
