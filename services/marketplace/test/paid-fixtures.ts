import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { signHoldForTerms, signVoucher } from '@platform/client/marketplace-payments';
import { monotonicUuidv7 } from '@platform/kit/ids';
import type { TestEngine } from '@platform/testkit/databases';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { ManualClock } from '@platform/testkit/manual-clock';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import type { Kysely } from 'kysely';
import type { MarketplaceSchema } from '../src/db/schema.ts';
import { type Manifest, type ManifestOperation, manifestHash, searchDocumentOf } from '../src/listings/manifest-types.ts';
import { type HarnessOptions, startMarketplace } from './harness.ts';

/*
 * A paid call's world: the real settlement service in a process of its own (PGlite in its data folder), a provider
 * server speaking the marketplace's provider protocol, and the marketplace in the test with its clock at real
 * time (settlement checks the same signed intents against its own clock).
 */

export const operatorToken = 'marketplace-test-operator-token';
export const fleetToken = 'marketplace-test-fleet-token';

export async function startSettlement(): Promise<ServiceProcess> {
  return startServiceProcess('settlement', {
    SETTLEMENT_DEV: 'true',
    SETTLEMENT_OPERATOR_TOKEN: operatorToken,
    LEDGER_TOKEN: fleetToken,
    SETTLEMENT_AGENT_AUTH_SECRET: 'marketplace-test-settlement-secret',
  });
}

/** What the provider is asked, by operation. */
export interface ProviderCall {
  path: string;
  body: { invocation_id: string; operation: string; args: Record<string, unknown>; caller_did: string; max_units: number; unit: string };
  signature: string | undefined;
  /** The body's bytes as received (what the signature covers). */
  raw: string;
}

/**
 * The provider: `/echo` answers `{result: {echo: args}, units: args.units ?? 1}`; `/fail` answers 500; `/slow`
 * never answers (the marketplace's timeout ends it); `/bad` answers a result that breaks its output schema.
 */
export async function startProvider() {
  const calls: ProviderCall[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw) as ProviderCall['body'];
      const header = request.headers['x-marketplace-signature'];
      calls.push({ path: request.url ?? '', body, signature: typeof header === 'string' ? header : undefined, raw });
      const send = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (request.url === '/echo') send(200, { result: { echo: body.args }, units: body.args.units ?? 1 });
      else if (request.url === '/fail') send(500, { error: 'provider fell over' });
      else if (request.url === '/bad') send(200, { result: { echo: 42 } });
      else if (request.url !== '/slow') send(404, {});
    });
  });
  const listening = await listenOnFreePort(server);
  return { url: `http://127.0.0.1:${listening.port}`, calls, close: listening.close };
}

const echoSchema = { type: 'object', properties: { echo: { type: 'object' } }, required: ['echo'] };

function operation(name: string, price: string, extra: Partial<ManifestOperation> = {}): ManifestOperation {
  return {
    name,
    description: `${name} the arguments`,
    input_schema: { type: 'object', properties: { units: { type: 'integer', minimum: 0 }, text: { type: 'string' } } },
    output_schema: echoSchema,
    pricing: { unit: 'call', price_per_unit: price, max_units: 10 },
    ...extra,
  };
}

export function providerManifest(endpoint: string): Manifest {
  return {
    version: 1,
    display_name: 'Echo provider',
    summary: 'Answers what it is asked, for a price',
    kind: 'api',
    endpoint,
    timeout_ms: 5_000,
    confidential: false,
    tags: ['test'],
    operations: [
      operation('echo', '0.001000'),
      operation('fail', '0.001000'),
      operation('slow', '0.001000', { timeout_ms: 150 }),
      operation('bad', '0.001000'),
    ],
  };
}

/** An active listing written straight into the database (publishing is the registry's, tested on its own). */
export async function seedActiveListing(db: Kysely<MarketplaceSchema>, manifest: Manifest, options: { owner?: string; payoutDid?: string } = {}) {
  const now = new Date();
  const id = monotonicUuidv7(now.getTime());
  await db
    .insertInto('listings')
    .values({
      id,
      slug: `echo-${id.slice(-12)}`,
      owner_address: options.owner ?? '0x00000000000000000000000000000000000000A1',
      payout_did: options.payoutDid ?? null,
      display_name: manifest.display_name,
      summary: manifest.summary,
      kind: manifest.kind,
      status: 'active',
      manifest: JSON.stringify(manifest) as never,
      manifest_hash: manifestHash(manifest),
      pricing_version: 1,
      search_document: searchDocumentOf(manifest),
      registry_status: 'none',
      registry_tx_hash: null,
      registry_block: null,
      registry_manifest_hash: null,
      created_at: now,
      updated_at: now,
      published_at: now,
    })
    .execute();
  return id;
}

/** The caller's signed hold for a 402's terms (the client's, as every caller signs it). */
export const payTerms = signHoldForTerms;
export { signVoucher };

/** The marketplace wired to a running settlement, its clock at real time. */
export async function startPaidMarketplace(engine: TestEngine, settlement: ServiceProcess, options: HarnessOptions = {}) {
  const market = await startMarketplace(engine, {
    clock: new ManualClock(new Date()),
    ...options,
    env: {
      MARKETPLACE_SETTLEMENT_URL: settlement.url,
      MARKETPLACE_LEDGER_TOKEN: fleetToken,
      MARKETPLACE_ALLOW_PRIVATE_ENDPOINTS: 'true',
      ...options.env,
    },
  });
  const ledger = {
    /** Credits a DID at settlement (an operator deposit). */
    async fund(did: string, amount: string) {
      const answer = await fetch(new URL('/v1/operator/deposits', settlement.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ did, amount, tx_hash: `0x${randomBytes(32).toString('hex')}`, log_index: 0 }),
      });
      if (answer.status !== 200) throw new Error(`funding failed: ${answer.status} ${await answer.text()}`);
    },
    async account(did: string): Promise<{ balance: string; held: string }> {
      const answer = await fetch(new URL(`/v1/account/${did}`, settlement.url), { headers: { authorization: `Bearer ${fleetToken}` } });
      if (answer.status === 404) return { balance: '0.000000', held: '0.000000' };
      return ((await answer.json()) as { data: { balance: string; held: string } }).data;
    },
    async receipt(seq: string): Promise<{ kind: string; amount: string; from: string; to: string; hold_id: string | null }> {
      const answer = await fetch(new URL(`/v1/receipt/${seq}`, settlement.url), { headers: { authorization: `Bearer ${fleetToken}` } });
      const body = (await answer.json()) as { data: { receipt: { kind: string; amount: string; from: string; to: string; hold_id: string | null } } };
      return body.data.receipt;
    },
  };
  /** A new caller (the DID handshake done) with `amount` at settlement. */
  async function fundedCaller(amount = '10') {
    const caller = await market.caller(generateAgentKey());
    await ledger.fund(caller.did, amount);
    return caller;
  }
  return { ...market, ledger, fundedCaller };
}

export type PaidMarketplace = Awaited<ReturnType<typeof startPaidMarketplace>>;
export type Caller = Awaited<ReturnType<PaidMarketplace['fundedCaller']>>;

/** Settlement and the provider, started once before a test file's suites and stopped after them. */
export function paidWorldForFile(): { settlement: ServiceProcess; provider: Awaited<ReturnType<typeof startProvider>> } {
  const world = {} as ReturnType<typeof paidWorldForFile>;
  before(async () => {
    [world.settlement, world.provider] = await Promise.all([startSettlement(), startProvider()]);
  });
  after(async () => {
    await world.provider?.close();
    await world.settlement?.stop();
  });
  return world;
}
