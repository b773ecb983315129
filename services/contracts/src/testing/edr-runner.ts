import { tmpdir } from 'node:os';
import {
  type Artifact,
  type ArtifactId,
  CallKind,
  type CallTrace,
  CollectStackTraces,
  EdrContext,
  type FuzzTestKind,
  IncludeTraces,
  type InvariantTestKind,
  L1_CHAIN_TYPE,
  type LogTrace,
  l1GenesisState,
  l1HardforkFromString,
  l1HardforkLatest,
  l1HardforkToString,
  l1SolidityTestRunnerFactory,
  type SolidityTestRunnerConfigArgs,
  type StandardTestKind,
  type SuiteResult,
  type TestResult,
  TestStatus,
  type TracingConfigWithBuffers,
} from '@nomicfoundation/edr';
import { limits } from '../limits.ts';
import type { FailureLocation, SuiteReport, TestCaseReport, TestGas, TestRunRequest } from './test-report.ts';

/**
 * The only module that speaks to @nomicfoundation/edr (pinned to 0.22.0: its API changes between minor versions).
 * Everything else sees the plain reports of test-report.ts. It runs inside the test process (test-process.ts).
 */

let context: Promise<EdrContext> | undefined;

function edrContext(): Promise<EdrContext> {
  context ??= (async () => {
    // EDR allows one context per process.
    const created = new EdrContext();
    await created.registerSolidityTestRunnerFactory(L1_CHAIN_TYPE, l1SolidityTestRunnerFactory());
    return created;
  })();
  return context;
}

export interface PreparedBuild {
  artifacts: Artifact[];
  tracing: TracingConfigWithBuffers;
}

export function prepare(request: TestRunRequest): PreparedBuild {
  return {
    artifacts: request.contracts.map((contract) => ({
      id: { name: contract.name, source: contract.source, solcVersion: request.solcVersion },
      contract: {
        abi: JSON.stringify(contract.abi),
        bytecode: contract.bytecode,
        deployedBytecode: contract.deployedBytecode,
        linkReferences: contract.linkReferences,
        deployedLinkReferences: contract.deployedLinkReferences,
      },
    })),
    tracing: { buildInfos: [{ buildInfo: request.buildInfo, output: request.buildInfoOutput }], ignoreContracts: false },
  };
}

const hardfork = l1HardforkToString(l1HardforkLatest());

function runnerConfig(request: TestRunRequest): SolidityTestRunnerConfigArgs {
  return {
    // No file-system permissions are granted, so cheatcodes that read or write files are refused wherever this points.
    projectRoot: tmpdir(),
    hardfork,
    localPredeploys: l1GenesisState(l1HardforkFromString(hardfork)),
    includeTraces: IncludeTraces.Failing,
    collectStackTraces: CollectStackTraces.OnFailure,
    fuzz: { runs: request.fuzzRuns },
    // As Hardhat 3 does by default: tests may deploy contracts larger than a block or EIP-7825 transaction allows.
    disableBlockGasLimit: true,
    disableTransactionGasCap: true,
    ffi: false,
    ...(request.testPattern === undefined ? {} : { testPattern: request.testPattern }),
  };
}

/**
 * Runs the suites of one build; `prepared` is reused across runs of the same build. EDR may deliver a suite's
 * callback after its promise resolves (Hardhat's runner waits for both too), so the run ends when both happened.
 */
export async function runSuites(request: TestRunRequest, prepared: PreparedBuild = prepare(request)): Promise<SuiteReport[]> {
  const edr = await edrContext();
  const reports: SuiteReport[] = [];
  const suites: ArtifactId[] = request.suites.map((suite) => ({ ...suite, solcVersion: request.solcVersion }));
  let allReported: () => void = () => {};
  const reported = new Promise<void>((resolve) => {
    allReported = resolve;
  });
  if (suites.length === 0) allReported();
  await edr.runSolidityTests(L1_CHAIN_TYPE, prepared.artifacts, suites, runnerConfig(request), prepared.tracing, (suite: SuiteResult) => {
    reports.push(suiteReport(suite));
    if (reports.length === suites.length) allReported();
  });
  await reported;
  return reports;
}

function suiteReport(suite: SuiteResult): SuiteReport {
  return {
    contract: suite.id.name,
    source: suite.id.source,
    duration_ms: nanosToMillis(suite.durationNs),
    warnings: suite.warnings,
    tests: suite.testResults.map((result) => caseReport(suite.id, result)),
  };
}

function caseReport(suite: ArtifactId, result: TestResult): TestCaseReport {
  const failed = result.status === TestStatus.Failure;
  const counterexample = result.counterexample;
  const single = counterexample && 'calldata' in counterexample ? counterexample : undefined;
  return {
    contract: suite.name,
    source: suite.source,
    name: result.name,
    status: failed ? 'failed' : result.status === TestStatus.Skipped ? 'skipped' : 'passed',
    reason: result.reason ?? null,
    gas: gasOf(result.kind),
    counterexample: single ? { signature: single.signature ?? null, args: single.args ?? null, calldata: hex(single.calldata) } : null,
    logs: result.decodedLogs.slice(0, limits.logLines),
    trace: failed ? traceLines(result.callTraces()) : null,
    location: failed ? failureLocation(result) : null,
    duration_ms: nanosToMillis(result.durationNs),
  };
}

function gasOf(kind: StandardTestKind | FuzzTestKind | InvariantTestKind): TestGas {
  if ('consumedGas' in kind) return { kind: 'unit', gas: Number(kind.consumedGas) };
  if ('meanGas' in kind) return { kind: 'fuzz', runs: Number(kind.runs), mean_gas: Number(kind.meanGas), median_gas: Number(kind.medianGas) };
  return { kind: 'invariant', runs: Number(kind.runs), calls: Number(kind.calls), reverts: Number(kind.reverts) };
}

// The caller's files live under these folders; library imports (forge-std/, @openzeppelin/) never do.
const ownSource = /^(src|test|script)\//;

/** The innermost frame of the failure in the caller's own files (where a fix goes), else the innermost anywhere. */
function failureLocation(result: TestResult): FailureLocation | null {
  const trace = result.stackTrace();
  if (trace?.kind !== 'StackTrace') return null;
  const frames = trace.entries.flatMap((entry) => ('sourceReference' in entry && entry.sourceReference ? [entry.sourceReference] : []));
  const frame = frames.findLast((reference) => ownSource.test(reference.sourceName)) ?? frames.at(-1);
  return frame ? { file: frame.sourceName, line: frame.line, contract: frame.contract ?? null, function: frame.function ?? null } : null;
}

function hex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

function nanosToMillis(nanos: bigint): number {
  return Number(nanos / 1000n) / 1000;
}

/** Calls and events as indented lines (`[gas] Contract::fn(args)`, `← output`); creation code is not printed. */
function traceLines(roots: CallTrace[]): string[] {
  const lines: string[] = [];
  const visit = (node: CallTrace | LogTrace, depth: number) => {
    if (lines.length >= limits.traceLines) return;
    const indent = '  '.repeat(depth);
    if (!('address' in node)) {
      const parameters = node.parameters;
      lines.push(`${indent}emit ${Array.isArray(parameters) ? parameters.map(hex).join(' ') : `${parameters.name}(${parameters.arguments.join(', ')})`}`);
      return;
    }
    const target = node.contract ?? node.address;
    const value = node.value > 0n ? `{value: ${node.value}} ` : '';
    if (node.kind === CallKind.Create) lines.push(`${indent}[${node.gasUsed}] ${value}new ${target}@${node.address}`);
    else {
      const inputs =
        node.inputs instanceof Uint8Array ? (node.inputs.length > 0 ? hex(node.inputs) : '') : `${node.inputs.name}(${node.inputs.arguments.join(', ')})`;
      lines.push(`${indent}[${node.gasUsed}] ${value}${node.isCheatcode ? 'VM' : target}::${inputs}`);
    }
    for (const child of node.children) visit(child, depth + 1);
    const output = node.kind === CallKind.Create ? '' : node.outputs instanceof Uint8Array ? (node.outputs.length > 0 ? hex(node.outputs) : '') : node.outputs;
    if (!node.success || output !== '') lines.push(`${indent}  ← ${node.success ? '' : '[Revert] '}${output}`.trimEnd());
  };
  for (const root of roots) visit(root, 0);
  return lines;
}
