import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daemonTokenFor } from '@platform/kit/auth/daemon-token';
import { type Clock, systemClock } from '@platform/kit/clock';
import type { Env } from '@platform/kit/config';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { silentLogger, type TestEngine } from '@platform/testkit/databases';
import { type HttpCallInit, httpCall } from '@platform/testkit/http-call';
import { OAuth2Server } from 'oauth2-mock-server';
import type { Logger } from 'pino';
import { type ComposedRouter, composeRouter, daemonSecrets } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import type { RouterSchema } from '../src/db/schema.ts';
import { ProcessProvider } from '../src/environments/process-provider.ts';
import type { EnvironmentProvider } from '../src/environments/provider.ts';
import { daemonLaunch } from '../src/main.ts';

export const audience = 'platform-test';
export const adminToken = 'router-admin-token-77';
export const wakeToken = 'router-wake-token-88';
export const daemonRoot = 'daemon-token-root-for-tests-0123456789';

/** A real OpenID provider (discovery, JWKS, RS256 tokens) for the test, on a free port. */
export async function startIdentityProvider() {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const url = server.issuer.url as string;
  return {
    server,
    url,
    /** A token for `sub` (a fresh UUID by default), changed by `edit` before signing. */
    async token(
      options: { sub?: string; expiresIn?: number; kid?: string; edit?: (header: Record<string, unknown>, payload: Record<string, unknown>) => void } = {},
    ) {
      return server.issuer.buildToken({
        expiresIn: options.expiresIn ?? 3600,
        ...(options.kid ? { kid: options.kid } : {}),
        scopesOrTransform: (header, payload) => {
          payload.sub = options.sub ?? randomUUID();
          payload.aud = audience;
          options.edit?.(header as Record<string, unknown>, payload as Record<string, unknown>);
        },
      });
    },
    close: () => server.stop(),
  };
}

export type IdentityProvider = Awaited<ReturnType<typeof startIdentityProvider>>;

export interface TestRouter {
  router: ComposedRouter;
  publicUrl: string;
  internalUrl: string;
  volumes: string;
  /** A public call as the user of `token`. */
  call(method: string, path: string, token: string | null, init?: Omit<HttpCallInit, 'bearer'>): ReturnType<typeof httpCall>;
  admin(method: string, path: string, body?: unknown): ReturnType<typeof httpCall>;
  stop(): Promise<void>;
}

/**
 * A router in this process on free ports, over a fresh database of the engine, with the `process` provider starting
 * real daemon processes (the bundle) into a temporary volumes folder. `env` adds or overrides settings.
 */
export async function startRouter(
  engine: TestEngine,
  idp: IdentityProvider | undefined,
  options: {
    env?: Env;
    clock?: Clock;
    provider?: (base: EnvironmentProvider) => EnvironmentProvider;
    logger?: Logger;
    volumes?: string;
    database?: Database<RouterSchema>;
  } = {},
): Promise<TestRouter & { database: Database<RouterSchema>; dispose: () => Promise<void> }> {
  const fresh = options.database ? undefined : await engine.fresh();
  // As main does: the database counts its queries into the router's metrics.
  const metrics = createServiceMetrics('router');
  const database =
    options.database ??
    (await openDatabase<RouterSchema>({ ...(fresh?.options ?? { logger: silentLogger }), schema: fresh?.options.schema ?? 'router', metrics }));
  const volumes = options.volumes ?? mkdtempSync(join(tmpdir(), 'router-volumes-'));
  const config = loadConfig(
    {
      ROUTER_ADDR: '127.0.0.1:0',
      ROUTER_INTERNAL_ADDR: '127.0.0.1:0',
      ROUTER_ADMIN_TOKEN: adminToken,
      ROUTER_WAKE_TOKEN: wakeToken,
      ROUTER_VOLUMES_DIR: volumes,
      ROUTER_PROBE_INTERVAL: '20ms',
      ...(idp ? { IDP_URL: idp.url, ROUTER_IDP_AUDIENCE: audience } : {}),
      ...options.env,
    },
    daemonLaunch,
  );
  const clock = options.clock ?? systemClock;
  const provider = options.provider?.(
    new ProcessProvider(config.processProvider, {
      tokenFor: daemonTokenFor(daemonRoot),
      secretsFor: daemonSecrets({ daemonTokenRoot: daemonRoot, ownerTokenRoots: config.ownerTokenRoots, metricsToken: config.metricsToken }),
      logger: silentLogger,
    }),
  );
  const router = await composeRouter(database, config, {
    clock,
    logger: options.logger ?? silentLogger,
    daemonTokenRoot: daemonRoot,
    metrics,
    ...(provider ? { provider } : {}),
  });
  await router.publicApp.listen({ host: '127.0.0.1', port: 0 });
  await router.internalApp.listen({ host: '127.0.0.1', port: 0 });
  const url = (app: typeof router.publicApp | typeof router.internalApp) => {
    const address = app.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  };
  const publicUrl = url(router.publicApp);
  const internalUrl = url(router.internalApp);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await router.publicApp.close();
      await router.internalApp.close();
      await router.release();
    })();
    return stopped;
  };
  return {
    router,
    database,
    publicUrl,
    internalUrl,
    volumes,
    call: (method, path, token, init = {}) => httpCall(publicUrl, method, path, { ...init, bearer: token }),
    admin: (method, path, body) => httpCall(internalUrl, method, path, { bearer: adminToken, ...(body === undefined ? {} : { body }) }),
    stop,
    async dispose() {
      await stop();
      if (!options.database) await database.close();
      await fresh?.dispose();
      if (!options.volumes) rmSync(volumes, { recursive: true, force: true });
    },
  };
}

/** Whether this machine can listen on IPv6's loopback address (`::1`): some containers run without IPv6. */
export async function ipv6Loopback(): Promise<boolean> {
  const server = createNetServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ host: '::1', port: 0 }, () => server.close(() => resolve(true)));
  });
}

/** Counts what the router asks of its provider, passing every call through to the real one. */
export function countingProvider(base: EnvironmentProvider) {
  const counts = { ensure: 0, start: 0, stop: 0, destroy: 0 };
  const provider: EnvironmentProvider = {
    name: base.name,
    ensure: (user) => {
      counts.ensure++;
      return base.ensure(user);
    },
    start: (user) => {
      counts.start++;
      return base.start(user);
    },
    stop: (user) => {
      counts.stop++;
      return base.stop(user);
    },
    destroy: (user) => {
      counts.destroy++;
      return base.destroy(user);
    },
    address: (user) => base.address(user),
    state: (user) => base.state(user),
    running: () => base.running(),
    close: () => base.close(),
  };
  return { provider, counts };
}

/** A scheduler's wake body for `userId` (services/scheduler/README.md, Wake delivery), a fresh alarm each time. */
export const wakeBody = (userId: string) => ({
  user_id: userId,
  alarm_id: randomUUID(),
  label: 'stand-up',
  wake_message: 'Stand-up in five minutes',
  conversation_id: 'work',
  payload: {},
  scheduled_for: '2026-06-01T09:30:00.000Z',
  fired_at: '2026-06-01T09:30:00.100Z',
  attempt: 1,
});

/** Creates an invite and redeems it as the token's user. */
export async function invite(router: TestRouter, token: string): Promise<void> {
  const created = await router.admin('POST', '/admin/invites', {});
  const redeemed = await router.call('POST', '/v/invites/redeem', token, { body: { code: created.json.data.code } });
  if (redeemed.status !== 200) throw new Error(`redeem answered ${redeemed.status}: ${redeemed.text}`);
}
