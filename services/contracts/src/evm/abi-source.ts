import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { Abi } from 'viem';
import type { ArtifactsRepository } from '../compile/artifacts.repository.ts';
import type { ArtifactRow } from '../db/schema.ts';
import { limits } from '../limits.ts';
import type { DeploymentsRepository } from './deployments.repository.ts';

/** Where a call's ABI may come from, most explicit first. */
export interface AbiHints {
  abi?: unknown;
  contract?: string | undefined;
  project_id?: string | undefined;
}

/** A caller's ABI: the JSON array solc writes, or an artifact-shaped object holding it under `abi`. */
export function parseAbi(value: unknown): Abi {
  const entries = Array.isArray(value)
    ? value
    : typeof value === 'object' && value !== null && Array.isArray((value as { abi?: unknown }).abi)
      ? (value as { abi: unknown[] }).abi
      : undefined;
  if (!entries) throw invalidRequest('abi must be a JSON ABI array, or an object with an abi array', { field: 'abi' });
  if (entries.length > limits.abiEntries) throw invalidRequest(`abi may hold at most ${limits.abiEntries} entries`, { field: 'abi' });
  if (!entries.every((entry) => typeof entry === 'object' && entry !== null && typeof (entry as { type?: unknown }).type === 'string')) {
    throw invalidRequest('abi entries must be objects with a type', { field: 'abi' });
  }
  return entries as Abi;
}

/** One artifact by contract name, in a project or (without one) the most recently compiled; 404/409 otherwise. */
export async function findArtifact(artifacts: ArtifactsRepository, contract: string, projectId: string | undefined): Promise<ArtifactRow> {
  const rows = projectId === undefined ? await artifacts.latestByName(contract) : await artifacts.find(projectId, contract);
  const scope = projectId === undefined ? 'any compiled project' : `project ${projectId}`;
  if (rows.length === 0) throw new ServiceError('not_found', `unknown contract "${contract}" in ${scope}; compile it first`, { details: { contract } });
  if (projectId !== undefined && rows.length > 1) {
    throw new ServiceError('conflict', `contract name "${contract}" is defined in ${rows.map((row) => row.source).join(', ')}; name it as <path>:<name>`, {
      details: { reason: 'ambiguous_contract' },
    });
  }
  return rows[0] as ArtifactRow;
}

/**
 * The ABI to encode and decode with: the caller's `abi`, else the named contract's artifact, else the artifact of
 * a contract this engine deployed at `to`. Undefined when none applies (raw data in, raw data out).
 */
export async function resolveAbi(
  deps: { artifacts: ArtifactsRepository; deployments: DeploymentsRepository },
  hints: AbiHints,
  target: { chainId: number; to: string | undefined },
): Promise<Abi | undefined> {
  if (hints.abi !== undefined) return parseAbi(hints.abi);
  if (hints.contract !== undefined) return (await findArtifact(deps.artifacts, hints.contract, hints.project_id)).abi as Abi;
  if (target.to === undefined) return undefined;
  const deployment = await deps.deployments.findByAddress(target.chainId, target.to);
  if (!deployment) return undefined;
  const rows = await deps.artifacts.find(deployment.project_id, `${deployment.source}:${deployment.contract}`);
  return rows[0]?.abi as Abi | undefined;
}
