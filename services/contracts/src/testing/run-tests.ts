import { ServiceError } from '@platform/kit/errors';
import { type CompileRequest, compileOrFail } from '../compile/compile-project.ts';
import type { Compiler } from '../compile/compiler.ts';
import type { Diagnostic } from '../compile/diagnostics.ts';
import { type TestProcessClient, TestRunnerError, TestTimeoutError } from './test-process-client.ts';
import type { TestCaseReport } from './test-report.ts';
import { checkedRegExp, selectSuites, type TestFilters } from './test-selection.ts';

export type TestRequest = Pick<CompileRequest, 'sources' | 'project_id' | 'optimize' | 'via_ir'> & TestFilters;

export interface TestResult {
  project_id: string;
  /** True when it compiled and no selected test failed. */
  success: boolean;
  compiled: boolean;
  summary: { suites: number; passed: number; failed: number; skipped: number };
  tests: TestCaseReport[];
  diagnostics: Diagnostic[];
  duration_ms: number;
}

export interface TestDeps {
  compiler: Compiler;
  tests: TestProcessClient;
  fuzzRuns: number;
}

/** Compiles the project (cached) and runs its Foundry-style tests through EDR in the test process. */
export async function runTests(deps: TestDeps, request: TestRequest): Promise<TestResult> {
  const started = performance.now();
  if (request.filter !== undefined) checkedRegExp('filter', request.filter);
  const { projectId, build } = await compileOrFail(deps.compiler, request);
  const summary = { suites: 0, passed: 0, failed: 0, skipped: 0 };
  const done = (tests: TestCaseReport[], compiled: boolean): TestResult => ({
    project_id: projectId,
    success: compiled && summary.failed === 0,
    compiled,
    summary,
    tests,
    diagnostics: build.product.diagnostics,
    duration_ms: Math.round(performance.now() - started),
  });
  const { buildInfo, buildInfoOutput } = build.product;
  if (!buildInfo || !buildInfoOutput) return done([], false);
  const suites = selectSuites(build, request);
  if (suites.length === 0) return done([], true);
  let reports: Awaited<ReturnType<TestProcessClient['run']>>;
  try {
    reports = await deps.tests.run({
      buildHash: build.buildHash,
      build: () => ({ solcVersion: build.product.solcVersion, contracts: build.product.contracts, buildInfo, buildInfoOutput }),
      suites,
      testPattern: request.filter,
      fuzzRuns: deps.fuzzRuns,
    });
  } catch (error) {
    if (error instanceof TestTimeoutError)
      throw new ServiceError('unavailable', error.message, { cause: error, retryable: false, details: { reason: 'test_timeout' } });
    if (error instanceof TestRunnerError) throw new ServiceError('invalid_request', `the test runner refused the project: ${error.message}`, { cause: error });
    throw error;
  }
  const tests = reports
    .flatMap((suite) => suite.tests)
    .sort((a, b) => a.source.localeCompare(b.source) || a.contract.localeCompare(b.contract) || a.name.localeCompare(b.name));
  summary.suites = reports.length;
  for (const test of tests) summary[test.status]++;
  return done(tests, true);
}
