import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Env } from '@platform/kit/config';
import type { StartedService } from '@platform/kit/lifecycle';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';

/*
 * The settlement service exactly as `node src/main.ts` runs it (start() with an env), in its own process
 * so the load generator never shares its event loop. The parent reads the service's CPU time over IPC.
 */

const handlers = {
  /**
   * CPU time so far in µs: the whole service process (all threads: event loop, front threads, crypto worker, GC,
   * libuv pool) and its main thread alone, the sequencer's, whose share says whether it is the limit.
   */
  cpu: () => {
    const thread = process.threadCpuUsage();
    return { ...process.cpuUsage(), mainThread: thread.user + thread.system };
  },
  stop: async () => {
    await service?.stop();
    setImmediate(() => process.exit(0));
  },
};

export type SettlementProcess = Child<typeof handlers, { url: string }>;

let service: StartedService | undefined;

/**
 * The settings every bench run gives the service: its own database (PGlite in `dataDir` without a URL) and folder,
 * quiet logs, no rate limits, the faucet, and HTTP on the sequencer's thread unless a run asks for front threads.
 */
export function benchServiceEnv(databaseUrl: string | undefined, dataDir: string, httpThreads = 0): Env {
  return {
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
    SETTLEMENT_HTTP_THREADS: String(httpThreads),
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    SETTLEMENT_DEV: 'true',
    SETTLEMENT_SEQUENCER_KEY: randomBytes(32).toString('hex'),
    SETTLEMENT_RATE_WRITE: '1000000/1000000',
    SETTLEMENT_RATE_READ: '1000000/1000000',
    SETTLEMENT_RATE_AUTH: '1000000/1000000',
    SETTLEMENT_WINDOW_SECONDS: '60',
  };
}

/** Starts the service in a child process and resolves once it listens; `execArgv` adds node flags such as --cpu-prof. */
export function startSettlementProcess(env: Env, execArgv: string[] = []): Promise<SettlementProcess> {
  return forkChild(fileURLToPath(import.meta.url), env, execArgv);
}

if (import.meta.main) {
  // Imported here, not at the top, so the parent does not load the whole service to fork it.
  const { start } = await import('../src/main.ts');
  service = await start(JSON.parse(process.argv[2] ?? '{}') as Env, { handleSignals: false });
  serveChild(handlers, { url: service.url });
}
