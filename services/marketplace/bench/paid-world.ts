import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { type AgentKey, generateAgentKey } from '@platform/client/agent-key';
import { MarketplaceClient } from '@platform/client/marketplace-client';
import { openDatabase } from '@platform/kit/db/open-database';
import { freePort } from '@platform/kit/free-port';
import { createJsonClient } from '@platform/kit/http/json-client';
import { silentLogger } from '@platform/testkit/databases';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import type { TempDatabase } from '@platform/testkit/temp-database';
import type { MarketplaceSchema } from '../src/db/schema.ts';
import { providerManifest, seedActiveListing } from '../test/paid-fixtures.ts';

/*
 * The paid bench's world, every part in a process of its own: settlement and the marketplace (each on its own
 * PostgreSQL database), and in the bench's process a provider that answers at once and the callers.
 */

const fleetToken = 'bench-fleet-token';
const operatorToken = 'bench-operator-token';
const marketplaceSecret = 'bench-marketplace-secret';

export interface BenchCaller {
  key: AgentKey;
  /** The platform's client for this caller, over the bench's keep-alive JSON client. */
  market: MarketplaceClient;
}

export async function startPaidWorld(databases: { settlement: TempDatabase; marketplace: TempDatabase }, callerCount: number) {
  const provider = await listenOnFreePort(
    createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { args: { fail?: boolean } };
        // A call asking for it fails, for the charges table: what each rail charges when the provider fails.
        if (body.args?.fail === true) return response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"asked to fail"}');
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ result: { echo: body.args }, units: 1 }));
      });
    }),
  );
  const providerUrl = `http://127.0.0.1:${provider.port}`;
  // Quiet services (warnings only, as in production at load): each is told its port and polled until it answers.
  const quiet = async (name: string, env: Record<string, string>) => {
    const port = await freePort();
    // BENCH_PROFILE=<folder>: each service writes a CPU profile there when it stops.
    const profile: Record<string, string> = process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}/${name}` } : {};
    return startServiceProcess(name, { ...env, ...profile, PORT: String(port), LOG_LEVEL: 'warn' }, { readyUrl: `http://127.0.0.1:${port}/healthz` });
  };
  const settlement = await quiet('settlement', {
    DATABASE_URL: databases.settlement.url,
    LEDGER_TOKEN: fleetToken,
    SETTLEMENT_OPERATOR_TOKEN: operatorToken,
    SETTLEMENT_DEV: 'true',
    SETTLEMENT_AGENT_AUTH_SECRET: 'bench-settlement-secret',
  });
  const marketplace = await quiet('marketplace', {
    DATABASE_URL: databases.marketplace.url,
    MARKETPLACE_SETTLEMENT_URL: settlement.url,
    MARKETPLACE_LEDGER_TOKEN: fleetToken,
    MARKETPLACE_AGENT_AUTH_SECRET: marketplaceSecret,
    MARKETPLACE_DEV: 'true',
    MARKETPLACE_ALLOW_PRIVATE_ENDPOINTS: 'true',
    // Every caller runs the DID handshake from one address at the start; the handshake is measured by other benches.
    MARKETPLACE_RATE_AUTH: '10000/10000',
  });
  const database = await openDatabase<MarketplaceSchema>({ url: databases.marketplace.url, schema: 'marketplace', logger: silentLogger });
  const serviceId = await seedActiveListing(database.db, providerManifest(providerUrl));
  await database.close();
  const client = createJsonClient({ maxSockets: 512, timeoutMs: 30_000 });
  const transport = async (method: string, url: URL, init: { headers: Record<string, string>; body?: unknown }) => {
    const answer = await client.request(method, url, init);
    return { status: answer.status, json: answer.json };
  };
  const callers: BenchCaller[] = [];
  for (let i = 0; i < callerCount; i++) {
    const key = generateAgentKey();
    callers.push({ key, market: new MarketplaceClient({ baseUrl: marketplace.url, key, maxPayment: '100000', transport }) });
    const funded = await client.request('POST', new URL('/v1/operator/deposits', settlement.url), {
      headers: { authorization: `Bearer ${operatorToken}` },
      body: { did: key.did, amount: '100000', tx_hash: `0x${randomBytes(32).toString('hex')}`, log_index: 0 },
    });
    if (funded.status !== 200) throw new Error(`funding failed: ${funded.text}`);
  }
  async function stop(processes: ServiceProcess[] = [marketplace, settlement]) {
    for (const process of processes) await process.stop();
    await client.close();
    await provider.close();
  }
  /** A caller's account at settlement (what it has and what is held). */
  async function account(did: string): Promise<{ balance: string; held: string }> {
    const answer = await client.request('GET', new URL(`/v1/account/${did}`, settlement.url), { headers: { authorization: `Bearer ${fleetToken}` } });
    if (answer.status !== 200) throw new Error(`settlement answered ${answer.status} for the account of ${did}`);
    return (answer.json as { data: { balance: string; held: string } }).data;
  }
  return { providerUrl, settlement, marketplace, serviceId, callers, client, account, stop };
}

export type PaidWorld = Awaited<ReturnType<typeof startPaidWorld>>;
