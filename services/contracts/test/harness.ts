import { after, before } from 'node:test';
import type { LocalNode } from '@platform/kit/chain/anvil';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, type OpenDatabaseOptions, openDatabase } from '@platform/kit/db/open-database';
import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import type { TestEngine } from '@platform/testkit/databases';
import { silentLogger } from '@platform/testkit/databases';
import { ManualClock } from '@platform/testkit/manual-clock';
import { startTestChain } from '@platform/testkit/test-chain';
import type { PublicClient } from 'viem';
import { buildApp } from '../src/app.ts';
import type { ChainSettings, CustodyPolicy } from '../src/config.ts';
import { migrations } from '../src/db/migrations.ts';
import type { ContractsSchema } from '../src/db/schema.ts';
import { createEngine, type Engine } from '../src/engine.ts';
import { contractsMetrics } from '../src/metrics.ts';
import { createToolchain, type Toolchain } from '../src/toolchain.ts';
import { chainClient } from './chain-client.ts';

export const transportToken = 'test-contract-token';
export const walletKeyHex = '4f'.repeat(32);
export const startTime = '2026-03-01T12:00:00.000Z';
export const alice = 'did:platform:alice:0123456789abcdef';
export const bob = 'did:platform:bob:fedcba9876543210';
const ether = 10n ** 18n;

let toolchain: Toolchain | undefined;

/** One toolchain per test file, shared by every engine in it: solc threads and the test process are slow to start and hold no data. */
export function sharedToolchain(): Toolchain {
  toolchain ??= createToolchain({ compilerThreads: 1, compileTimeoutMs: 120_000, compileCacheEntries: 32, testTimeoutMs: 120_000, fuzzRuns: 64 }, silentLogger);
  return toolchain;
}

export async function closeSharedToolchain(): Promise<void> {
  await toolchain?.close();
  toolchain = undefined;
}

/** anvil on a free port, chain id 31337, no state file. */

/** An envelope as a test reads it. */
interface CallBody {
  ok: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever route's data shape they called.
  data?: any;
  error?: { code: string; message: string; reason?: string; [key: string]: unknown };
}

export interface CallOptions {
  body?: unknown;
  /** Transport bearer; defaults to the right one, null sends none. */
  bearer?: string | null;
  /** X-Platform-Actor-DID. */
  caller?: string;
  headers?: Record<string, string>;
}

export interface HarnessOptions {
  transportToken?: string;
  localRpcUrl?: string;
  policy?: Partial<CustodyPolicy>;
  chains?: Partial<ChainSettings>;
  /** Another engine's database (a restart, other settings); that engine's close disposes of it. */
  database?: Database<ContractsSchema>;
  /** A toolchain with other limits than the shared one; the caller closes it. */
  toolchain?: Toolchain;
  /** The service's metrics (the database's and the engine's), served at /metrics behind `metricsToken`. */
  metrics?: { metrics: ServiceMetrics; metricsToken: string };
}

/** One engine on a fresh database, a manual clock and the file's shared toolchain, driven through app.inject. */
export async function startContracts(engineKind: TestEngine, options: HarnessOptions = {}) {
  const fresh = options.database ? undefined : await engineKind.fresh();
  const database: Database<ContractsSchema> =
    options.database ??
    (await openDatabase<ContractsSchema>({ ...(fresh?.options as OpenDatabaseOptions), ...(options.metrics && { metrics: options.metrics.metrics }) }));
  await migrate(database, 'contracts', migrations);
  const clock = new ManualClock(startTime);
  const chains: ChainSettings = {
    mainnetRpcUrl: '',
    localRpcUrl: options.localRpcUrl ?? 'http://127.0.0.1:9',
    localChainId: 31337,
    localNode: 'external',
    anvilPath: undefined,
    localFundingWei: 100n * ether,
    rpcTimeoutMs: 5_000,
    receiptTimeoutMs: 10_000,
    localNodeStartTimeoutMs: 60_000,
    localChainRequired: false,
    ...options.chains,
  };
  const policy: CustodyPolicy = { spendCapWei: ether, dailyCapWei: 10n * ether, allowedChains: ['local', 'primary-mainnet'], ...options.policy };
  const engine: Engine = createEngine({
    db: database.db,
    clock,
    logger: silentLogger,
    toolchain: options.toolchain ?? sharedToolchain(),
    chains,
    policy,
    walletKeyHex,
    ...(options.metrics && { metrics: contractsMetrics(options.metrics.metrics) }),
  });
  const bearer = options.transportToken ?? transportToken;
  const app = buildApp({ engine, ping: () => database.ping(), logger: silentLogger, transportToken: bearer, ...options.metrics });
  await app.ready();

  async function call(method: 'GET' | 'POST', url: string, callOptions: CallOptions = {}) {
    const headers: Record<string, string> = { ...callOptions.headers };
    const presented = callOptions.bearer === undefined ? bearer : callOptions.bearer;
    if (presented) headers.authorization = `Bearer ${presented}`;
    if (callOptions.caller !== undefined) headers['x-platform-actor-did'] = callOptions.caller;
    const response = await app.inject({ method, url, headers, ...(callOptions.body === undefined ? {} : { payload: callOptions.body as object }) });
    return {
      status: response.statusCode,
      text: response.body,
      body: (String(response.headers['content-type']).startsWith('application/json') ? response.json() : {}) as CallBody,
    };
  }

  async function close() {
    await app.close();
    if (!fresh) return;
    await database.close();
    await fresh.dispose();
  }

  return { app, clock, database, engine, call, close };
}

export type Contracts = Awaited<ReturnType<typeof startContracts>>;

/** The file's local chain: its RPC URL and a viem client reading it. */
export interface TestChain {
  readonly url: string;
  readonly client: PublicClient;
}

/**
 * One anvil for the test file: started in a file-level `before`, stopped with the shared toolchain in `after`.
 * Read `url` and `client` inside tests (they exist once `before` ran).
 *
 * @example const chain = useTestChain(); … startContracts(engine, { localRpcUrl: chain.url })
 */
export function useTestChain(): TestChain {
  let node: LocalNode | undefined;
  let client: PublicClient | undefined;
  before(async () => {
    node = await startTestChain();
    client = chainClient(node.url);
  });
  after(async () => {
    await node?.stop();
    await closeSharedToolchain();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the test chain is read before its before() hook ran');
    return value;
  };
  return {
    get url() {
      return started(node).url;
    },
    get client() {
      return started(client);
    },
  };
}
