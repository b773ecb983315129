import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  type ArtifactsFile,
  type ContractEngine,
  compileArtifacts,
  engineCall,
  formatArtifacts,
  readContractSources,
  type SourceMap,
} from './contract-engine.ts';

/** One Solidity test as the contract engine's `/v1/test` reports it. */
export interface SolidityTest {
  contract: string;
  source: string;
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  reason: string | null;
  gas: { kind: string; gas?: number; runs?: number; mean_gas?: number };
  logs: string[];
  trace: string[] | null;
  location: { file: string; line: number; function: string | null } | null;
}

export interface TestAnswer {
  compiled: boolean;
  success: boolean;
  summary: { suites: number; passed: number; failed: number; skipped: number };
  tests: SolidityTest[];
  diagnostics: { severity: string; formatted?: string; message: string }[];
}

/** Failing tests and compile errors, as a reader needs them to fix the contract. */
export function explain(answer: TestAnswer): string {
  const errors = answer.diagnostics.filter((d) => d.severity === 'error').map((d) => d.formatted ?? d.message);
  const failures = answer.tests
    .filter((t) => t.status === 'failed')
    .map((t) => {
      const where = t.location ? ` at ${t.location.file}:${t.location.line}` : '';
      return `${t.contract}.${t.name}: ${t.reason ?? '(no reason)'}${where}\n    ${(t.trace ?? []).slice(0, 30).join('\n    ')}`;
    });
  return [...errors, ...failures].join('\n\n');
}

/** A service's Solidity: where its sources and committed artifacts live, and the contracts it deploys and calls. */
export interface ServiceContracts {
  /** `services/<name>`, for messages. */
  workspace: string;
  contractsDir: string;
  artifactsPath: string;
  targets: readonly string[];
  readSources(): SourceMap;
  compile(engine: ContractEngine, sources: SourceMap): Promise<ArtifactsFile>;
}

export function serviceContracts(workspace: string, contractsDir: string, targets: readonly string[]): ServiceContracts {
  return {
    workspace,
    contractsDir,
    artifactsPath: join(contractsDir, 'artifacts.json'),
    targets: Object.freeze([...targets]),
    readSources: () => readContractSources(contractsDir),
    compile: (engine, sources) => compileArtifacts(engine, sources, targets),
  };
}

/** `npm run build:contracts`: compiles the production sources and writes artifacts.json; returns what it wrote. */
export async function buildArtifacts(contracts: ServiceContracts, engine: ContractEngine): Promise<string> {
  const artifacts = await contracts.compile(engine, contracts.readSources());
  writeFileSync(contracts.artifactsPath, formatArtifacts(artifacts));
  const sizes = Object.entries(artifacts.contracts).map(([name, { bytecode }]) => `${name} ${(bytecode.length - 2) / 2} bytes`);
  return `wrote ${relative(process.cwd(), contracts.artifactsPath)} (${artifacts.compiler.version}; ${sizes.join(', ')}; sources ${artifacts.sources_sha256})`;
}

const rebuildOf = (contracts: ServiceContracts) => `run \`npm run build:contracts -w ${contracts.workspace}\` and commit contracts/artifacts.json`;

/** Every Solidity test passes, the named ones exist (a deleted or renamed one is noticed), and at least `minimum` ran. */
export async function assertSolidityTestsPass(engine: ContractEngine, sources: SourceMap, required: readonly string[], minimum: number): Promise<void> {
  const answer: TestAnswer = await engineCall(engine, '/v1/test', { sources });
  assert.equal(answer.compiled, true, `the contracts do not compile:\n${explain(answer)}`);
  assert.equal(answer.summary.failed, 0, `failing Solidity tests:\n${explain(answer)}`);
  assert.equal(answer.success, true, explain(answer));
  const names = new Set(answer.tests.map((t) => `${t.contract}.${t.name}`));
  const missing = required.filter((name) => !names.has(name));
  assert.deepEqual(missing, [], `tests that should exist: ${missing.join(', ')}`);
  assert.ok(answer.summary.passed >= minimum, `only ${answer.summary.passed} tests ran`);
}

/** The committed artifacts.json is exactly what build:contracts makes of the sources now. */
export async function assertArtifactsCurrent(contracts: ServiceContracts, engine: ContractEngine, sources: SourceMap): Promise<void> {
  const rebuild = rebuildOf(contracts);
  assert.ok(existsSync(contracts.artifactsPath), `contracts/artifacts.json is missing: ${rebuild}`);
  const committed = JSON.parse(readFileSync(contracts.artifactsPath, 'utf8')) as ArtifactsFile;
  const built = await contracts.compile(engine, sources);
  assert.equal(committed.sources_sha256, built.sources_sha256, `contracts/src changed since artifacts.json was built: ${rebuild}`);
  assert.deepEqual(committed.compiler, built.compiler, `the compiler or its settings changed: ${rebuild}`);
  assert.deepEqual(Object.keys(committed.contracts).sort(), [...contracts.targets].sort(), `artifacts.json holds other contracts: ${rebuild}`);
  for (const name of contracts.targets) {
    assert.equal(committed.contracts[name]?.bytecode, built.contracts[name]?.bytecode, `${name} bytecode is stale: ${rebuild}`);
    assert.deepEqual(committed.contracts[name]?.abi, built.contracts[name]?.abi, `${name} ABI is stale: ${rebuild}`);
  }
}

export interface AbiParameter {
  type: string;
  name?: string;
  indexed?: boolean;
  components?: readonly AbiParameter[];
}

export interface AbiItem {
  type: string;
  name?: string;
  inputs?: readonly AbiParameter[];
  outputs?: readonly AbiParameter[];
  stateMutability?: string;
  anonymous?: boolean;
}

/**
 * One ABI item as comparable text, to hold a service's hand-written ABI to the compiled one: kind, name, parameter
 * types, indexed flags, whether a function writes, and the parameter names of events (viem decodes an event's
 * arguments into an object by name; a function's parameter names change no byte of a call). `pure` and `view` are
 * the same to a caller.
 */
export function abiSignature(item: AbiItem): string {
  const named = item.type === 'event';
  const parameter = (p: AbiParameter): string =>
    `${p.components ? `(${p.components.map(parameter).join(',')})${p.type.slice('tuple'.length)}` : p.type}${p.indexed ? ' indexed' : ''} ${named ? (p.name ?? '') : ''}`.trim();
  const mutability = item.stateMutability === 'pure' ? 'view' : item.stateMutability === 'nonpayable' ? '' : (item.stateMutability ?? '');
  const outputs = item.type === 'function' ? ` returns (${(item.outputs ?? []).map(parameter).join(', ')})` : '';
  return `${item.type} ${item.name ?? ''}(${(item.inputs ?? []).map(parameter).join(', ')}) ${mutability}${outputs}`.replace(/\s+/g, ' ');
}
