import { join } from 'node:path';
import { ConfigError, type Env, read } from '@platform/kit/config';
import { freePort } from '@platform/kit/free-port';
import type { StartedService } from '@platform/kit/lifecycle';
import { derivedValue, platformDataDir } from '../platform-secrets.ts';
import { devIdentityPort, devScope } from './dev-client.ts';
import { requestDevToken } from './request-token.ts';

/** The development provider's folder: IDENTITY_DATA_DIR, else `identity` under `up`'s DATA_DIR. */
export function devIdentityDir(env: Env): string {
  return env.IDENTITY_DATA_DIR || join(platformDataDir(env), 'identity');
}

/** Whether `platform up` runs the provider: development only, and only when IDP_URL names no provider of the operator's own. */
export function identityRunsUnder(env: Env): boolean {
  return env.NODE_ENV !== 'production' && !env.IDP_URL;
}

/**
 * `platform up`'s identity provider as one of its services (cli/src/services.ts; the router waits for it): its
 * folder and port from `up`'s per-service settings, its client secret and cookie key derived from the root
 * (IDENTITY_CLIENT_SECRET, IDENTITY_COOKIE_KEY in platform-secrets.ts); its `links` tell the router's wiring what to trust.
 */
export async function start(env: Env): Promise<StartedService> {
  const clientSecret = read.string(env, 'IDENTITY_CLIENT_SECRET', '');
  const cookieKey = read.string(env, 'IDENTITY_COOKIE_KEY', '');
  if (clientSecret === '' || cookieKey === '')
    throw new ConfigError('IDENTITY_CLIENT_SECRET and IDENTITY_COOKIE_KEY are required (platform up derives them from its root secret)');
  // Loaded here only: production never loads oidc-provider, and other commands do not pay for it.
  const { startDevIdentity } = await import('./dev-provider.ts');
  const identity = await startDevIdentity({
    dir: env.DATA_DIR || devIdentityDir(env),
    port: read.integer(env, 'PORT', devIdentityPort, { min: 0, max: 65535 }),
    clientSecret,
    cookieKey,
    consoleOrigins: read
      .string(env, 'IDENTITY_CONSOLE_ORIGINS', '')
      .split(',')
      .filter((origin) => origin !== ''),
  });
  return {
    name: 'identity',
    url: identity.url,
    dataLocation: identity.dataLocation,
    links: { audience: identity.audience, userId: identity.userId },
    stop: identity.stop,
  };
}

/**
 * Fixes the router's public port before anything starts (a free one under PORT=0) and tells the identity provider the
 * router's origins, so the console's client may be sent back to the router's `/console/` and nowhere else.
 */
export async function withConsoleOrigins(env: Env): Promise<Env> {
  if (!identityRunsUnder(env)) return env;
  const fixed = { ...env };
  const address = env.ROUTER_ADDR ? /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(env.ROUTER_ADDR) : undefined;
  // As serviceEnv hands them out: ROUTER_ADDR, else ROUTER_PORT, else a free one under PORT=0, else the router's 8443.
  let port = address?.[3] ?? (env.ROUTER_PORT || undefined) ?? (env.PORT === '0' ? undefined : '8443');
  if (port === undefined || port === '0') {
    port = String(await freePort());
    fixed.ROUTER_PORT = port;
  }
  const host = address?.[1] ?? address?.[2] ?? env.HOST ?? '127.0.0.1';
  const hosts = new Set(['127.0.0.1', 'localhost', host.includes(':') ? `[${host}]` : host]);
  hosts.delete('0.0.0.0');
  hosts.delete('[::]');
  fixed.IDENTITY_CONSOLE_ORIGINS = [...hosts].map((name) => `http://${name}:${port}`).join(',');
  return fixed;
}

/** The router's settings for the provider `up` started: its URL (the issuer, discovered) and the tokens' audience. */
export function routerIdentitySettings(identity: { url: string; links?: Record<string, string> }): Record<string, string> {
  return { IDP_URL: identity.url, ROUTER_IDP_AUDIENCE: identity.links?.audience as string, ROUTER_CONSOLE_SCOPE: devScope };
}

/**
 * Makes the development user one who holds a redeemed invite, as a real user does: the router is asked, with a token
 * from the provider, whether they are invited; if not, an invite is created on its admin route and redeemed on its
 * public one. Also proves at start that the router accepts the provider's tokens. Their environment is provisioned by
 * their first request, as anyone's.
 */
export async function inviteDevUser(identity: StartedService, router: StartedService, root: Buffer, env: Env): Promise<void> {
  const token = await requestDevToken(identity.url, derivedValue('IDENTITY_CLIENT_SECRET', root) as string);
  const asUser = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const me = await call(`${router.url}/v/me`, { headers: asUser });
  if ((me as { invited?: boolean }).invited === true) return;
  const adminToken = env.ROUTER_ADMIN_TOKEN || (derivedValue('ROUTER_ADMIN_TOKEN', root) as string);
  const invite = await call(`${router.links?.internalUrl}/admin/invites`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ uses: 1, note: 'platform up: the development user' }),
  });
  await call(`${router.url}/v/invites/redeem`, { method: 'POST', headers: asUser, body: JSON.stringify({ code: (invite as { code: string }).code }) });
}

async function call(url: string, init: RequestInit): Promise<unknown> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as { ok: boolean; data?: unknown; error?: { message?: string } };
  if (!body.ok) throw new Error(`${init.method ?? 'GET'} ${new URL(url).pathname} answered ${response.status}: ${body.error?.message ?? 'no reason'}`);
  return body.data;
}
