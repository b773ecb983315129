import type { Logger } from 'pino';
import { Compiler } from './compile/compiler.ts';
import { SolcWorkers } from './compile/solc-workers.ts';
import { TestProcessClient } from './testing/test-process-client.ts';

export interface ToolchainSettings {
  compilerThreads: number;
  compileTimeoutMs: number;
  compileCacheEntries: number;
  testTimeoutMs: number;
  fuzzRuns: number;
}

/** The compiler threads, their cache and the test process: database-free, so tests share one across engines. */
export interface Toolchain {
  compiler: Compiler;
  tests: TestProcessClient;
  fuzzRuns: number;
  /** Resolves once solc is loaded and the test process is up, so the first request does not pay for either. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export function createToolchain(settings: ToolchainSettings, logger: Logger): Toolchain {
  const workers = new SolcWorkers({ threads: settings.compilerThreads, timeoutMs: settings.compileTimeoutMs, logger });
  const tests = new TestProcessClient({ timeoutMs: settings.testTimeoutMs, logger });
  return {
    compiler: new Compiler({ workers, cacheEntries: settings.compileCacheEntries }),
    tests,
    fuzzRuns: settings.fuzzRuns,
    warm: async () => {
      await Promise.all([workers.warm(), tests.warm()]);
    },
    close: async () => {
      await Promise.all([workers.close(), tests.close()]);
    },
  };
}
