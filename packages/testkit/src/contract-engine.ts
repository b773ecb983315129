import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '@platform/kit/canonical-json';
import { httpCall } from './http-call.ts';
import { startServiceProcess } from './service-process.ts';

/**
 * A service's Solidity and the platform's contract engine (a real `platform serve contracts` process), shared by
 * each service's `build-contracts.ts` (which writes `contracts/artifacts.json`) and its contracts test (which runs
 * the Solidity tests and checks that file is in sync). Both compile through `compileArtifacts`, so "in sync" means
 * "what the build script would write today".
 */

export type SourceMap = Record<string, string>;

/** Every `.sol` file under `<contractsDir>/src` and `/test`, keyed as the engine wants them (`src/X.sol`, `test/Y.t.sol`). */
export function readContractSources(contractsDir: string): SourceMap {
  const sources: SourceMap = {};
  for (const folder of ['src', 'test']) {
    for (const entry of readdirSync(join(contractsDir, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.sol')) continue;
      const full = join(entry.parentPath, entry.name);
      const key = `${folder}/${full
        .slice(join(contractsDir, folder).length + 1)
        .split('\\')
        .join('/')}`;
      sources[key] = readFileSync(full, 'utf8');
    }
  }
  return sources;
}

/** The deployable sources only: tests are not part of what ships. */
export function productionSources(sources: SourceMap): SourceMap {
  return Object.fromEntries(Object.entries(sources).filter(([path]) => path.startsWith('src/')));
}

/** SHA-256 hex over the RFC 8785 JSON (sorted keys) of the sources: the same files give the same hash in any order. */
export function sourcesSha256(sources: SourceMap): string {
  return createHash('sha256').update(canonicalJson(sources), 'utf8').digest('hex');
}

export interface ContractArtifact {
  abi: unknown[];
  bytecode: string;
}

/** The shape of contracts/artifacts.json. */
export interface ArtifactsFile {
  compiler: Record<string, unknown>;
  sources_sha256: string;
  contracts: Record<string, ContractArtifact>;
}

export interface ContractEngine {
  url: string;
  /** The engine's transport bearer (random per start). */
  token: string;
  /** The engine's log lines, for failure messages. */
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Starts the contract engine as a real process (`platform serve contracts`) with a temporary data folder and a
 * random bearer. `CONTRACTS_LOCAL_NODE=external` with an RPC URL nothing answers on: compiling and testing need no
 * chain, so no anvil is started.
 */
export async function startContractEngine(env: Record<string, string> = {}): Promise<ContractEngine> {
  const token = randomBytes(24).toString('hex');
  const engine = await startServiceProcess(
    'contracts',
    {
      CONTRACTS_LOCAL_NODE: 'external',
      CONTRACTS_LOCAL_RPC_URL: 'http://127.0.0.1:1',
      PLATFORM_CONTRACT_TOKEN: token,
      ...env,
    },
    // Readiness is the "Server listening" line, which needs the default info log level. solc and the test process
    // warm up before the engine listens, which takes seconds on a busy machine.
    { timeoutMs: 120_000 },
  );
  return { url: engine.url, token, logs: engine.logs, stop: () => engine.stop() };
}

/** POSTs to the engine and returns `data`, throwing with the engine's answer on anything but 200 `ok`. */
// biome-ignore lint/suspicious/noExplicitAny: the engine's answers are read field by field by the callers.
export async function engineCall(engine: ContractEngine, path: string, body: unknown): Promise<any> {
  const answer = await httpCall(engine.url, 'POST', path, { body, bearer: engine.token });
  if (answer.status !== 200 || answer.json?.ok !== true) throw new Error(`${path} answered ${answer.status}: ${answer.text.slice(0, 2000)}`);
  return answer.json.data;
}

/**
 * Compiles the production sources exactly as the build script does and returns the artifacts file's content.
 * Throws with the compiler's diagnostics when the build fails.
 */
export async function compileArtifacts(engine: ContractEngine, sources: SourceMap, contractTargets: readonly string[]): Promise<ArtifactsFile> {
  const src = productionSources(sources);
  const data = await engineCall(engine, '/v1/compile', { sources: src, targets: [...contractTargets], optimize: true });
  if (data.success !== true) {
    const diagnostics = (data.diagnostics as { severity: string; formatted?: string; message: string }[])
      .filter((d) => d.severity === 'error')
      .map((d) => d.formatted ?? d.message);
    throw new Error(`compile failed:\n${diagnostics.join('\n')}`);
  }
  const contracts: Record<string, ContractArtifact> = {};
  for (const name of contractTargets) {
    const artifact = (data.artifacts as { name: string; abi: unknown[]; bytecode: string }[]).find((a) => a.name === name);
    if (artifact === undefined) throw new Error(`the engine returned no artifact for ${name}`);
    contracts[name] = { abi: artifact.abi, bytecode: artifact.bytecode.startsWith('0x') ? artifact.bytecode : `0x${artifact.bytecode}` };
  }
  return { compiler: data.compiler, sources_sha256: sourcesSha256(src), contracts };
}

/** artifacts.json's exact text: 2-space indentation and a final newline, so the committed file diffs cleanly. */
export function formatArtifacts(artifacts: ArtifactsFile): string {
  return `${JSON.stringify(artifacts, null, 2)}\n`;
}
