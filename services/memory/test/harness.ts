import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Env } from '@platform/kit/config';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import { silentLogger, type TestEngine } from '@platform/testkit/databases';
import { type HttpCallInit, httpCall } from '@platform/testkit/http-call';
import { ManualClock } from '@platform/testkit/manual-clock';
import type { Logger } from 'pino';
import { type ComposedMemory, composeMemory } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import type { MemorySchema } from '../src/db/schema.ts';
import { pgliteExtensions } from '../src/main.ts';
import { rootOwner } from '../src/owners.ts';

export const token = 'test-memory-token-3c9a';
export const startTime = '2026-06-01T12:00:00.000Z';

export interface MemoryOptions {
  env?: Env;
  /** Run on this database instead of a fresh one (a restart, or a second instance). */
  database?: Database<MemorySchema>;
  clock?: ManualClock;
  logger?: Logger;
  /** The service's metrics (the database's too, on a fresh database), served at /metrics behind `env.PLATFORM_METRICS_TOKEN`. */
  metrics?: ServiceMetrics;
}

export type MemoryServer = Awaited<ReturnType<typeof startMemory>>;

/** A fresh database on the engine (PGlite in a temporary folder, so restarts keep it), and its disposal. */
export async function freshDatabase(
  engine: TestEngine,
  metrics?: ServiceMetrics,
): Promise<{ database: Database<MemorySchema>; reopen: () => Promise<Database<MemorySchema>>; dispose: () => Promise<void> }> {
  const fresh = await engine.fresh();
  const dataDir = engine.name === 'pglite' ? mkdtempSync(join(tmpdir(), 'memory-test-')) : undefined;
  const options = { ...fresh.options, dataDir, pgliteExtensions, schema: fresh.options.schema ?? 'memory', ...(metrics && { metrics }) };
  const reopen = () => openDatabase<MemorySchema>(options);
  return {
    database: await reopen(),
    reopen,
    dispose: async () => {
      await fresh.dispose();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A server on a fresh database of the engine, and one call that closes both and removes the database. */
export async function startOnFreshDatabase(engine: TestEngine, options: MemoryOptions = {}): Promise<{ server: MemoryServer; dispose: () => Promise<void> }> {
  const fresh = await freshDatabase(engine, options.metrics);
  const server = await startMemory(fresh.database, options);
  return {
    server,
    dispose: async () => {
      await server.close();
      await fresh.database.close();
      await fresh.dispose();
    },
  };
}

/** One memory server on a free port over the given database, with a manual clock. */
export async function startMemory(database: Database<MemorySchema>, options: MemoryOptions = {}) {
  const clock = options.clock ?? new ManualClock(startTime);
  const config = loadConfig({ MEMORY_MCP_TOKEN: token, ...options.env });
  const composed: ComposedMemory = await composeMemory(database, config, clock, options.logger ?? silentLogger, options.metrics);
  const { app } = composed;
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const clients: Client[] = [];

  /** A tool through the JSON route; `bearer: null` sends none. */
  async function call(tool: string, args: unknown, init: Omit<HttpCallInit, 'body'> = {}) {
    return httpCall(url, 'POST', `/v1/${tool}`, { bearer: token, ...init, body: args });
  }

  /** `call` for a tool that must succeed: its `data`. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever shape the tool answers.
  async function ok(tool: string, args: unknown): Promise<any> {
    const answer = await call(tool, args);
    if (answer.status !== 200) throw new Error(`${tool} answered ${answer.status}: ${answer.text}`);
    return answer.json.data;
  }

  /** Remembers plain statements in a scope and returns their ids in order. */
  async function remember(contents: (string | Record<string, unknown>)[], scope = 'default'): Promise<string[]> {
    const data = await ok('remember', { scope, memories: contents.map((entry) => (typeof entry === 'string' ? { content: entry } : entry)) });
    return data.memories.map((memory: { id: string }) => memory.id);
  }

  /** The official MCP SDK client over Streamable HTTP with the bearer. */
  async function mcp(bearer: string | null = token): Promise<Client> {
    const client = new Client({ name: 'memory-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function close() {
    for (const client of clients) await client.close().catch(() => undefined);
    await composed.stopBackgroundWork();
    await app.close();
  }

  return {
    app,
    url,
    clock,
    database,
    service: composed.service,
    /** The term statistics of the root token's owner, whom every call of this harness acts as. */
    lexicon: () => composed.service.lexiconOf(rootOwner),
    backfill: composed.backfill,
    call,
    ok,
    remember,
    mcp,
    http: (method: string, path: string, init: HttpCallInit = {}) => httpCall(url, method, path, { bearer: token, ...init }),
    close,
  };
}
