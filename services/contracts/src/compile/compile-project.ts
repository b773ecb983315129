import { ServiceError } from '@platform/kit/errors';
import { limits } from '../limits.ts';
import { type ArtifactsRepository, splitContractName } from './artifacts.repository.ts';
import type { CompiledContract } from './compile-product.ts';
import { type Build, type Compiler, solcVersion } from './compiler.ts';
import type { Diagnostic } from './diagnostics.ts';
import { CompileTimeoutError } from './solc-workers.ts';
import { checkProjectId, checkSources, projectIdOf, type SourceMap } from './sources.ts';

export interface CompileRequest {
  sources: Record<string, string>;
  targets?: string[] | undefined;
  project_id?: string | undefined;
  optimize?: boolean | undefined;
  via_ir?: boolean | undefined;
}

export interface ArtifactView {
  name: string;
  source: string;
  abi: unknown[];
  bytecode: string;
  deployed_bytecode: string;
}

export interface CompileResult {
  project_id: string;
  /** False when solc reported an error: the diagnostics say where; no artifacts are returned or stored. */
  success: boolean;
  cached: boolean;
  compiler: { version: string; optimize: boolean; via_ir: boolean };
  artifacts: ArtifactView[];
  diagnostics: Diagnostic[];
  duration_ms: number;
}

export function artifactView(contract: CompiledContract): ArtifactView {
  return { name: contract.name, source: contract.source, abi: contract.abi, bytecode: contract.bytecode, deployed_bytecode: contract.deployedBytecode };
}

/** The contracts a compile answers with: the project's own by default, or exactly the named targets (library contracts too). */
export function selectTargets(build: Build, targets: readonly string[]): CompiledContract[] {
  const contracts = build.product.contracts;
  if (targets.length === 0) return contracts.filter((contract) => build.sources[contract.source] !== undefined);
  return targets.map((target) => {
    const wanted = splitContractName(target);
    const matches = contracts.filter((contract) => contract.name === wanted.name && (wanted.source === undefined || contract.source === wanted.source));
    if (matches.length === 0) throw new ServiceError('not_found', `unknown contract "${target}": the build defines no such contract`, { details: { target } });
    if (matches.length > 1) {
      throw new ServiceError(
        'conflict',
        `contract name "${target}" is defined in ${matches.map((match) => match.source).join(', ')}; name it as <path>:<name>`,
        {
          details: { reason: 'ambiguous_contract', target },
        },
      );
    }
    return matches[0] as CompiledContract;
  });
}

/** Checks the request and compiles it (or finds it in the cache); a compile that overruns its limit is a 503. */
export async function compileOrFail(compiler: Compiler, request: Pick<CompileRequest, 'sources' | 'project_id' | 'optimize' | 'via_ir'>) {
  const sources: SourceMap = request.sources;
  checkSources(sources);
  if (request.project_id !== undefined) checkProjectId(request.project_id);
  const settings = { optimize: request.optimize ?? false, viaIr: request.via_ir ?? false };
  try {
    const { build, cached } = await compiler.compile(sources, settings);
    return { projectId: request.project_id ?? projectIdOf(sources), build, cached };
  } catch (error) {
    if (error instanceof CompileTimeoutError)
      throw new ServiceError('unavailable', error.message, { cause: error, retryable: false, details: { reason: 'compile_timeout' } });
    throw error;
  }
}

/** Compiles a project (or finds it in the cache), stores its artifacts under the project id and answers with both. */
export async function compileProject(deps: { compiler: Compiler; artifacts: ArtifactsRepository }, request: CompileRequest): Promise<CompileResult> {
  const started = performance.now();
  if ((request.targets?.length ?? 0) > limits.targets) throw new ServiceError('invalid_request', `targets may name at most ${limits.targets} contracts`);
  const { projectId, build, cached } = await compileOrFail(deps.compiler, request);
  const success = build.product.buildInfo !== null;
  const selected = success ? selectTargets(build, request.targets ?? []) : [];
  if (success) {
    const stored = new Set([...selectTargets(build, []), ...selected]);
    await deps.artifacts.replaceProject(projectId, build.buildHash, build.product.solcVersion, [...stored]);
  }
  return {
    project_id: projectId,
    success,
    cached,
    compiler: { version: solcVersion, optimize: build.settings.optimize, via_ir: build.settings.viaIr },
    artifacts: selected.map(artifactView),
    diagnostics: build.product.diagnostics,
    duration_ms: Math.round(performance.now() - started),
  };
}
