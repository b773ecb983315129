import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { systemClock } from '@platform/kit/clock';
import { ConfigError, type Env } from '@platform/kit/config';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import pino from 'pino';
import { serviceName, serviceVersion } from './app.ts';
import { ensureLocalChain } from './chains/local-chain.ts';
import { loadConfig } from './config.ts';
import { migrations } from './db/migrations.ts';
import type { ContractsSchema } from './db/schema.ts';
import { createEngine } from './engine.ts';
import { callerDidOf } from './routes/caller.ts';
import { createToolchain } from './toolchain.ts';
import { toolTable } from './tools/index.ts';
import { ToolInvoker } from './tools/invoke.ts';

/** A running stdio server; `closed` resolves once stdin has ended (or `close` was called) and everything is stopped. */
export interface StdioServer {
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * The engine as an MCP server over stdio: the same tool table as HTTP and /rpc, run in this process. Stdout carries
 * protocol messages only; logs go to stderr. The calling agent's DID (whose wallet signs) is PLATFORM_AGENT_DID.
 * Its data lives in DATA_DIR, by default .data/contracts-mcp (not the HTTP service's folder: embedded PGlite must
 * not be opened by two processes; set DATABASE_URL to share one PostgreSQL database with the service).
 *
 * @example await runStdio(process.env)   // what `npx platform mcp contracts` runs
 */
export async function runStdio(env: Env): Promise<StdioServer> {
  const config = loadConfig({ ...env, DATA_DIR: env.DATA_DIR || '.data/contracts-mcp' });
  // Stderr, never stdout: stdout is the protocol channel.
  const logger = pino({ level: config.logLevel, base: { service: `${serviceName}-mcp` } }, pino.destination(2));
  const callerDid = callerDidOf(env.PLATFORM_AGENT_DID);
  const database = await openDatabase<ContractsSchema>({ url: config.databaseUrl, dataDir: config.dataDir, schema: serviceName, logger });
  await migrate(database, serviceName, migrations);
  const localChain = await ensureLocalChain(config.chains, config.dataDir, logger);
  const toolchain = createToolchain(config, logger);
  // Loads solc and the test process while the client initialises; a failure surfaces on the first compile.
  toolchain.warm().catch((error: unknown) => logger.warn({ err: error }, 'toolchain warm-up failed'));
  const walletKey = secretFromSettingOrFile(config.walletKeyHex, config.dataDir, 'wallet.key', 'CONTRACTS_WALLET_KEY');
  const engine = createEngine({
    db: database.db,
    clock: systemClock,
    logger,
    toolchain,
    chains: config.chains,
    policy: config.policy,
    walletKeyHex: walletKey.hex,
  });
  const invoker = new ToolInvoker(toolTable(engine), logger);

  const server = new Server({ name: `platform-${serviceName}`, version: serviceVersion }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: invoker.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => invoker.call(request.params.name, request.params.arguments, { callerDid }));

  let stopping: Promise<void> | undefined;
  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const close = () => {
    stopping ??= (async () => {
      await server.close().catch(() => undefined);
      await toolchain.close();
      await localChain.stop();
      await database.close();
      resolveClosed();
    })();
    return stopping;
  };
  // The client ending its side (stdin closes) is how an MCP stdio session ends.
  process.stdin.once('end', () => void close());
  await server.connect(new StdioServerTransport());
  logger.info({ database: database.location, caller: callerDid ?? null }, 'contract engine MCP server on stdio');
  return { closed, close };
}

if (import.meta.main) {
  runStdio(process.env)
    .then((server) => {
      const stop = () => void server.close();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return server.closed;
    })
    .then(() => process.exit(0))
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof ConfigError ? `contracts mcp: ${error.message}` : String((error as Error)?.stack ?? error)}\n`);
      process.exit(1);
    });
}
