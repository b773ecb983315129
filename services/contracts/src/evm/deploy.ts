import { canonicalHash } from '@platform/kit/canonical-json';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import { type Abi, encodeDeployData, getAddress, type Hex, keccak256 } from 'viem';
import type { ChainProfile } from '../chains/chain-profiles.ts';
import type { DeploymentRow } from '../db/schema.ts';
import { limits } from '../limits.ts';
import { findArtifact } from './abi-source.ts';
import { parseWei, toAbiArgs, toJsonValue } from './abi-values.ts';
import { type EvmDeps, requireCaller } from './engine-deps.ts';

export interface DeployRequest {
  idempotency_key: string;
  chain_id: string;
  contract: string;
  project_id?: string | undefined;
  constructor_args?: unknown[] | undefined;
  spend_cap_wei?: string | undefined;
  value?: string | undefined;
}

const keyPattern = /^[\x21-\x7e]+$/;
type AbiConstructor = Extract<Abi[number], { type: 'constructor' }>;

/** A deployment record as callers see it (deploy answers and registry reads). */
export function deploymentView(row: DeploymentRow, replayed = false) {
  return {
    found: true as const,
    idempotency_key: row.idempotency_key,
    chain: row.chain_profile,
    chain_id: Number(row.chain_id),
    contract: row.contract,
    source: row.source,
    project_id: row.project_id,
    status: row.status,
    address: row.address,
    tx_hash: row.tx_hash,
    block_number: row.block_number?.toString() ?? null,
    gas_used: row.gas_used?.toString() ?? null,
    deployer: row.deployer_address,
    deployer_did: row.deployer_did,
    created_at: row.created_at.toISOString(),
    replayed,
  };
}

/**
 * Deploys a compiled contract with the caller's wallet, at most once per (chain, idempotency key): the key is
 * claimed before anything is signed, so a retry, or a second request while the first is still pending, gets the
 * recorded deployment. The same key with another contract, arguments or caller is 409.
 */
export async function deploy(deps: EvmDeps, request: DeployRequest, callerDid: string | undefined) {
  if (request.idempotency_key.length > limits.idempotencyKeyChars || !keyPattern.test(request.idempotency_key)) {
    throw invalidRequest(`idempotency_key must be 1-${limits.idempotencyKeyChars} printable ASCII characters without spaces`, { field: 'idempotency_key' });
  }
  const did = requireCaller(callerDid, 'deploy');
  const value = parseWei('value', request.value) ?? 0n;
  const requestedCapWei = parseWei('spend_cap_wei', request.spend_cap_wei);
  const profile = await deps.chains.resolve(request.chain_id);
  const artifact = await findArtifact(deps.artifacts, request.contract, request.project_id);
  const abi = artifact.abi as Abi;
  const data = deployData(abi, artifact.bytecode as Hex, request.constructor_args ?? [], artifact.name);
  const requestHash = canonicalHash({
    did,
    project_id: artifact.project_id,
    contract: `${artifact.source}:${artifact.name}`,
    code: keccak256(data),
    args: toJsonValue(request.constructor_args ?? []),
    value: value.toString(),
  });
  const existing = await deps.deployments.find(profile.chainId, request.idempotency_key);
  if (existing) return replay(deps, profile, existing, requestHash, did);

  const wallet = await deps.wallets.open(did);
  const claim = await deps.deployments.claim({
    chain_id: profile.chainId,
    idempotency_key: request.idempotency_key,
    chain_profile: profile.id,
    deployer_did: did,
    deployer_address: wallet.address,
    request_hash: requestHash,
    project_id: artifact.project_id,
    source: artifact.source,
    contract: artifact.name,
  });
  if (!claim.claimed) return replay(deps, profile, claim.row, requestHash, did);
  const key = request.idempotency_key;
  try {
    const outcome = await deps.sender.send({
      wallet,
      profile,
      to: undefined,
      data,
      value,
      purpose: 'deploy',
      requestedCapWei,
      abi,
      onSigned: (txHash, rawTx) => deps.deployments.markSigned(profile.chainId, key, txHash, rawTx),
      onRefused: () => deps.deployments.forgetRefused(profile.chainId, key),
    });
    if (outcome.status !== 'submitted') {
      if (outcome.gas_used !== null && outcome.fee_wei !== null) deps.metrics.deployMined(BigInt(outcome.gas_used), value + BigInt(outcome.fee_wei));
      await deps.deployments.markMined(profile.chainId, key, {
        status: outcome.status,
        address: outcome.status === 'confirmed' ? outcome.contract_address : null,
        blockNumber: BigInt(outcome.block_number ?? 0),
        gasUsed: BigInt(outcome.gas_used ?? 0),
      });
    }
  } catch (error) {
    // Refused before signing (policy, estimate, funds): nothing exists on chain, so the key is free for a retry.
    await deps.deployments.release(profile.chainId, key);
    throw error;
  }
  return deploymentView((await deps.deployments.find(profile.chainId, key)) as DeploymentRow);
}

function deployData(abi: Abi, bytecode: Hex, args: unknown[], name: string): Hex {
  if (bytecode === '0x') throw invalidRequest(`${name} has no bytecode (an interface or abstract contract) and cannot be deployed`, { field: 'contract' });
  if (bytecode.includes('__$')) throw invalidRequest(`${name} needs linked libraries, which deploy does not support yet`, { field: 'contract' });
  const constructorEntry = abi.find((entry): entry is AbiConstructor => entry.type === 'constructor');
  const encodedArgs = toAbiArgs(constructorEntry?.inputs ?? [], args, `${name}'s constructor`);
  return encodeDeployData({ abi, bytecode, args: encodedArgs });
}

/** The recorded deployment for a key: refreshed from the chain while unconfirmed, refused if the key meant something else. */
async function replay(deps: EvmDeps, profile: ChainProfile, row: DeploymentRow, requestHash: string, did: string) {
  if (row.deployer_did !== did || row.request_hash !== requestHash) {
    throw new ServiceError('conflict', `idempotency_key ${row.idempotency_key} was used on chain ${profile.chainId} for another deployment`, {
      details: { reason: 'idempotency_key_reused' },
    });
  }
  if (row.status !== 'submitted' || row.tx_hash === null) return deploymentView(row, true);
  return deploymentView(await refreshSubmitted(deps, profile, row), true);
}

/** A deployment sent but not yet seen mined: look for its receipt, and re-send the same signed bytes if the node lost them. */
export async function refreshSubmitted(deps: EvmDeps, profile: ChainProfile, row: DeploymentRow): Promise<DeploymentRow> {
  const client = await deps.chains.rpc.verifiedClient(profile);
  const txHash = row.tx_hash as Hex;
  const receipt = await client.getTransactionReceipt({ hash: txHash }).catch(() => undefined);
  if (receipt) {
    await deps.deployments.markMined(profile.chainId, row.idempotency_key, {
      status: receipt.status === 'success' ? 'confirmed' : 'reverted',
      address: receipt.status === 'success' && receipt.contractAddress ? getAddress(receipt.contractAddress) : null,
      blockNumber: receipt.blockNumber,
      gasUsed: receipt.gasUsed,
    });
    return (await deps.deployments.find(profile.chainId, row.idempotency_key)) as DeploymentRow;
  }
  // "already known" and similar answers mean the node has it; either way the bytes are the same transaction.
  if (row.raw_tx) await client.sendRawTransaction({ serializedTransaction: row.raw_tx as Hex }).catch(() => undefined);
  return row;
}
