import { createHash, randomUUID } from 'node:crypto';
import { freePort } from '@platform/kit/free-port';
import { runPlatform } from '@platform/testkit/run-command';

/** The root the image check derives each service's secrets from, as deploy/make-env.sh does from an operator's. */
export const checkRootSecret = 'image-check-root-secret-0123456789abcdef';

/** 64 hex characters derived from a label: a stand-in for a key an operator generates once. */
const key = (label: string) => createHash('sha256').update(`image-check/${label}`).digest('hex');

export interface ImageRun {
  name: string;
  /** The image's arguments (after its entrypoint). */
  args: string[];
  /** The port the check reaches /healthz on. */
  port: number;
  env: Record<string, string>;
}

/** `platform secret --for <service>` under the check's root: the secrets make-env.sh would write for it. */
async function derived(service: string): Promise<Record<string, string>> {
  const run = await runPlatform(['secret', '--for', service], { env: { PLATFORM_SECRET: checkRootSecret } });
  if (run.code !== 0) throw new Error(`platform secret --for ${service} failed: ${run.stderr}`);
  return Object.fromEntries(
    run.stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/**
 * Every service as the image runs it in production (NODE_ENV=production, its secrets, the settings production
 * requires, PostgreSQL), on a free loopback port; and the per-user daemon as the router's fly and kubernetes providers
 * start it (the image's default command, no NODE_ENV: its key lives in its volume). Peers it would call are given an
 * address that refuses (nothing is started but the one service): each must still start and answer /healthz. The
 * contract engine gets `chainUrl`, a chain node the check runs (with none it logs an error, as it should).
 */
export async function imageRuns(databaseUrl: string, chainUrl: string): Promise<ImageRun[]> {
  const nowhere = 'http://127.0.0.1:9';
  const extra: Record<string, Record<string, string>> = {
    scheduler: { SCHEDULER_WAKE_URL: `${nowhere}/internal/wake` },
    contracts: { CONTRACTS_WALLET_KEY: key('contracts-wallet'), CONTRACTS_LOCAL_NODE: 'external', CONTRACTS_LOCAL_RPC_URL: chainUrl },
    settlement: { SETTLEMENT_SEQUENCER_KEY: key('sequencer') },
    marketplace: { MARKETPLACE_SIGNING_KEY: key('market-signing'), MARKETPLACE_AGENT_KEY: key('market-agent'), MARKETPLACE_SETTLEMENT_URL: nowhere },
    gateway: { GATEWAY_UPSTREAM_URL: `${nowhere}/v1` },
    memory: {},
    connector: {
      CONNECTOR_VAULT_KEYS: `*k1:${Buffer.from(key('vault'), 'hex').toString('base64')}`,
      CONNECTOR_PUBLIC_URL: 'https://platform.example/connector',
    },
  };
  const runs: ImageRun[] = [];
  for (const [name, settings] of Object.entries(extra)) {
    const port = await freePort();
    runs.push({
      name,
      args: ['serve', name],
      port,
      env: { NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: databaseUrl, ...(await derived(name)), ...settings },
    });
  }
  const [routerPort, internalPort] = [await freePort(), await freePort()];
  runs.push({
    name: 'router',
    args: ['serve', 'router'],
    port: routerPort,
    env: {
      NODE_ENV: 'production',
      ROUTER_ADDR: `127.0.0.1:${routerPort}`,
      ROUTER_INTERNAL_ADDR: `127.0.0.1:${internalPort}`,
      DATABASE_URL: databaseUrl,
      IDP_URL: 'https://idp.example',
      ROUTER_IDP_AUDIENCE: 'urn:platform:router',
      ...(await derived('router')),
    },
  });
  const daemonPort = await freePort();
  runs.push({
    name: 'daemon',
    args: [],
    port: daemonPort,
    env: {
      HOST: '127.0.0.1',
      PORT: String(daemonPort),
      DAEMON_USER_ID: randomUUID(),
      PLATFORM_DAEMON_TOKEN: key('daemon-bearer').slice(0, 43),
      ...(await derived('daemon')),
    },
  });
  return runs;
}
