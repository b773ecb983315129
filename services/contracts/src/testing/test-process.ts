import { type PreparedBuild, prepare, runSuites } from './edr-runner.ts';
import type { SuiteId, SuiteReport, TestRunRequest } from './test-report.ts';

/**
 * The test process: runs EDR's Solidity test runner for the engine. It is a child process started with an empty
 * environment because Foundry cheatcodes (`vm.envString`, `vm.envOr`) read the environment of the process they
 * run in, and the engine's holds the wallet key and bearer token. Builds stay prepared between runs.
 */

export interface BuildPayload {
  solcVersion: string;
  contracts: TestRunRequest['contracts'];
  buildInfo: Uint8Array;
  buildInfoOutput: Uint8Array;
}

export type TestProcessRequest = {
  id: number;
  buildHash: string;
  /** Sent when the process may not hold the build yet; otherwise it runs from its own copy. */
  build: BuildPayload | undefined;
  suites: SuiteId[];
  testPattern: string | undefined;
  fuzzRuns: number;
};

export type TestProcessReply =
  | { id: number; ok: true; value: SuiteReport[] }
  | { id: number; ok: false; message: string; unknownBuild: boolean }
  | { ready: true };

const keptBuilds = 4;
const builds = new Map<string, { payload: BuildPayload; prepared: PreparedBuild }>();

async function handle(message: TestProcessRequest): Promise<TestProcessReply> {
  if (message.build) {
    const request = { ...message.build, buildHash: message.buildHash, suites: [], testPattern: undefined, fuzzRuns: 0 };
    builds.delete(message.buildHash);
    builds.set(message.buildHash, { payload: message.build, prepared: prepare(request) });
    while (builds.size > keptBuilds) builds.delete(builds.keys().next().value as string);
  }
  const kept = builds.get(message.buildHash);
  if (!kept) return { id: message.id, ok: false, message: 'build not held', unknownBuild: true };
  const request: TestRunRequest = {
    ...kept.payload,
    buildHash: message.buildHash,
    suites: message.suites,
    testPattern: message.testPattern,
    fuzzRuns: message.fuzzRuns,
  };
  return { id: message.id, ok: true, value: await runSuites(request, kept.prepared) };
}

process.on('message', (message: TestProcessRequest) => {
  handle(message)
    .catch(
      (error: unknown): TestProcessReply => ({
        id: message.id,
        ok: false,
        message: error instanceof Error ? error.message : String(error),
        unknownBuild: false,
      }),
    )
    .then((reply) => process.send?.(reply));
});
// The parent going away (even by SIGKILL) closes the channel; nothing else would end this process.
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true } satisfies TestProcessReply);
