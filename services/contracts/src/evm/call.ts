import { invalidRequest } from '@platform/kit/errors';
import type { Hex } from 'viem';
import { type AbiHints, resolveAbi } from './abi-source.ts';
import { parseAddress, parseHexData, parseWei } from './abi-values.ts';
import { encodeCall } from './call-data.ts';
import { type EvmDeps, requireCaller } from './engine-deps.ts';
import { type SimulateResult, simulate } from './simulate.ts';
import type { TransactionOutcome } from './transactions.ts';

export interface CallRequest extends AbiHints {
  to: string;
  method?: string | undefined;
  args?: unknown[] | undefined;
  data?: string | undefined;
  /** Default true: a read. False signs and sends a transaction under the custody caps. */
  simulate_only?: boolean | undefined;
  chain_id?: string | undefined;
  spend_cap_wei?: string | undefined;
  value?: string | undefined;
}

export type CallResult = ({ mode: 'read' } & SimulateResult) | ({ mode: 'write'; chain: string; chain_id: number; from: string } & TransactionOutcome);

/** Calls a contract by method and args (ABI given, from a compiled contract, or known from a deployment) or raw data. */
export async function callContract(deps: EvmDeps, request: CallRequest, callerDid: string | undefined): Promise<CallResult> {
  const to = parseAddress('to', request.to);
  if (request.method === undefined && request.data === undefined) throw invalidRequest('call needs method (with args) or data', { field: 'method' });
  if (request.method !== undefined && request.data !== undefined) throw invalidRequest('send method or data, not both', { field: 'data' });
  if (request.method === undefined && request.args !== undefined) throw invalidRequest('args need a method', { field: 'args' });
  const value = parseWei('value', request.value) ?? 0n;
  const requestedCapWei = parseWei('spend_cap_wei', request.spend_cap_wei);
  const profile = await deps.chains.resolve(request.chain_id);
  const abi = await resolveAbi(deps, request, { chainId: profile.chainId, to });
  let data: Hex;
  if (request.method !== undefined) {
    if (!abi) throw invalidRequest(`no ABI known for ${to}: send abi, or contract (and project_id)`, { field: 'abi' });
    data = encodeCall(abi, request.method, request.args ?? []).data;
  } else data = parseHexData('data', request.data as string);

  if (request.simulate_only ?? true) {
    const read = await simulate(deps, { chain_id: profile.id, to, data, value: value.toString(), abi }, callerDid);
    return { mode: 'read', ...read };
  }
  const wallet = await deps.wallets.open(requireCaller(callerDid, 'a call with simulate_only=false'));
  const outcome = await deps.sender.send({ wallet, profile, to, data, value, purpose: 'call', requestedCapWei, abi });
  return { mode: 'write', chain: profile.id, chain_id: profile.chainId, from: wallet.address, ...outcome };
}
