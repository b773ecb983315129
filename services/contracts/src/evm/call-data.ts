import { invalidRequest } from '@platform/kit/errors';
import { type Abi, type AbiFunction, type BlockTag, decodeFunctionData, decodeFunctionResult, encodeFunctionData, type Hex, toFunctionSignature } from 'viem';
import { toAbiArgs, toJsonValue } from './abi-values.ts';

const blockTags = new Set(['latest', 'pending', 'earliest', 'safe', 'finalized']);

/** `block` from the wire: a tag, or a block number in decimal or 0x hex. */
export function parseBlock(block: string | undefined): { blockTag: BlockTag } | { blockNumber: bigint } {
  if (block === undefined) return { blockTag: 'latest' };
  if (blockTags.has(block)) return { blockTag: block as BlockTag };
  if (/^(0|[1-9]\d{0,19})$/.test(block) || /^0x[0-9a-fA-F]{1,16}$/.test(block)) return { blockNumber: BigInt(block) };
  throw invalidRequest('block must be latest, pending, earliest, safe, finalized or a block number', { field: 'block' });
}

/** The function a call names: by name when it is not overloaded, else by signature `transfer(address,uint256)`. */
export function findFunction(abi: Abi, method: string): AbiFunction {
  const functions = abi.filter((entry): entry is AbiFunction => entry.type === 'function');
  const bySignature = functions.find((entry) => toFunctionSignature(entry).replaceAll(' ', '') === method.replaceAll(' ', ''));
  if (bySignature) return bySignature;
  const byName = functions.filter((entry) => entry.name === method);
  if (byName.length === 1) return byName[0] as AbiFunction;
  if (byName.length > 1)
    throw invalidRequest(`method ${method} is overloaded; name it by signature: ${byName.map((entry) => toFunctionSignature(entry)).join(', ')}`, {
      field: 'method',
    });
  throw invalidRequest(`the ABI has no function "${method}"`, { field: 'method' });
}

/** Calldata for `method(args)` against an ABI. */
export function encodeCall(abi: Abi, method: string, args: readonly unknown[]): { data: Hex; fn: AbiFunction } {
  const fn = findFunction(abi, method);
  const data = encodeFunctionData({ abi: [fn], functionName: fn.name, args: toAbiArgs(fn.inputs, args, fn.name) });
  return { data, fn };
}

/** Decodes return data when the ABI knows the function the calldata calls; null otherwise. */
export function decodeResult(abi: Abi | undefined, calldata: Hex, returnData: Hex): unknown {
  if (!abi || calldata.length < 10) return null;
  try {
    const { functionName } = decodeFunctionData({ abi, data: calldata });
    const fn = abi.find((entry): entry is AbiFunction => entry.type === 'function' && entry.name === functionName && encodeSelectorMatches(entry, calldata));
    if (!fn) return null;
    return toJsonValue(decodeFunctionResult({ abi: [fn], functionName: fn.name, data: returnData }));
  } catch {
    return null;
  }
}

function encodeSelectorMatches(fn: AbiFunction, calldata: Hex): boolean {
  try {
    decodeFunctionData({ abi: [fn], data: calldata });
    return true;
  } catch {
    return false;
  }
}
