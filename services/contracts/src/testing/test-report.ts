import type { CompiledContract } from '../compile/compile-product.ts';

/** A test contract to run: its file and name. */
export interface SuiteId {
  source: string;
  name: string;
}

/** Everything the test process needs to run suites of one build. */
export interface TestRunRequest {
  buildHash: string;
  solcVersion: string;
  /** Every contract of the build (the runner deploys libraries and resolves `new X` from them). */
  contracts: CompiledContract[];
  buildInfo: Uint8Array;
  buildInfoOutput: Uint8Array;
  suites: SuiteId[];
  /** Regex over test function names (Foundry's --match-test). */
  testPattern: string | undefined;
  fuzzRuns: number;
}

export type TestGas =
  | { kind: 'unit'; gas: number }
  | { kind: 'fuzz'; runs: number; mean_gas: number; median_gas: number }
  | { kind: 'invariant'; runs: number; calls: number; reverts: number };

/** Where a failure happened in the caller's sources. */
export interface FailureLocation {
  file: string;
  line: number;
  contract: string | null;
  function: string | null;
}

export interface TestCaseReport {
  contract: string;
  source: string;
  /** The test function's signature, e.g. `testFuzz_transfer(uint256)`. */
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  /** Revert reason or failed assertion (`supply mismatch: 1000 != 1001`); null on success. */
  reason: string | null;
  gas: TestGas;
  /** The shrunk input that broke a fuzz test. */
  counterexample: { signature: string | null; args: string | null; calldata: string } | null;
  /** console.log output, in order. */
  logs: string[];
  /** The call tree of a failed test, Foundry style, one line per call, event or return. */
  trace: string[] | null;
  location: FailureLocation | null;
  duration_ms: number;
}

export interface SuiteReport {
  contract: string;
  source: string;
  duration_ms: number;
  warnings: string[];
  tests: TestCaseReport[];
}
