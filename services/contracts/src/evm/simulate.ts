import type { Address, Hex } from 'viem';
import { type AbiHints, resolveAbi } from './abi-source.ts';
import { parseAddress, parseHexData, parseWei } from './abi-values.ts';
import { decodeResult, parseBlock } from './call-data.ts';
import type { EvmDeps } from './engine-deps.ts';
import { type Revert, revertOrThrow } from './revert-decoder.ts';

export interface SimulateRequest extends AbiHints {
  chain_id: string;
  to: string;
  data?: string | undefined;
  from?: string | undefined;
  value?: string | undefined;
  block?: string | undefined;
}

export interface SimulateResult {
  chain: string;
  chain_id: number;
  success: boolean;
  return_data: Hex | null;
  /** The return values, when an ABI for the called function is known. */
  decoded: unknown;
  /** eth_estimateGas for the same call: the gas a transaction would need; null when it reverts. */
  gas_used: string | null;
  revert: Revert | null;
  from: Address | null;
}

/** A dry run (eth_call) on a chain at a block; a revert is an answer, decoded with viem, not an error. */
export async function simulate(deps: EvmDeps, request: SimulateRequest, callerDid: string | undefined): Promise<SimulateResult> {
  const to = parseAddress('to', request.to);
  const data = request.data === undefined ? '0x' : parseHexData('data', request.data);
  const value = parseWei('value', request.value);
  const block = parseBlock(request.block);
  // Reads never create a wallet: a caller without one simulates from no particular account.
  const from = request.from !== undefined ? parseAddress('from', request.from) : callerDid === undefined ? undefined : await deps.wallets.addressOf(callerDid);
  const profile = await deps.chains.resolve(request.chain_id);
  const abi = await resolveAbi(deps, request, { chainId: profile.chainId, to });
  const client = await deps.chains.rpc.verifiedClient(profile);
  const call = { to, data, ...(from ? { account: from } : {}), ...(value === undefined ? {} : { value }) };
  const base = { chain: profile.id, chain_id: profile.chainId, from: from ?? null };
  let returnData: Hex;
  try {
    returnData = (await client.call({ ...call, ...block })).data ?? '0x';
  } catch (error) {
    return { ...base, success: false, return_data: null, decoded: null, gas_used: null, revert: revertOrThrow(error, abi) };
  }
  let gas: bigint | null = null;
  try {
    gas = await client.estimateGas({ ...call, ...('blockNumber' in block ? { blockNumber: block.blockNumber } : { blockTag: block.blockTag }) });
  } catch {
    // A call that succeeds but cannot be estimated (an old block the node pruned): the result still stands.
  }
  return { ...base, success: true, return_data: returnData, decoded: decodeResult(abi, data, returnData), gas_used: gas?.toString() ?? null, revert: null };
}
