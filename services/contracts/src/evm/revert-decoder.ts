import { ServiceError } from '@platform/kit/errors';
import { type Abi, BaseError, decodeErrorResult, type Hex, HttpRequestError, TimeoutError } from 'viem';
import { toJsonValue } from './abi-values.ts';

/** A revert as callers see it: `Error(string)`, a panic code, a custom error with its arguments, or raw data. */
export type Revert =
  | { kind: 'error'; name: 'Error'; message: string; data: Hex }
  | { kind: 'panic'; name: 'Panic'; code: number; message: string; data: Hex }
  | { kind: 'custom'; name: string; signature: string; args: unknown[]; message: string; data: Hex }
  | { kind: 'empty'; message: string; data: '0x' }
  | { kind: 'unknown'; selector: Hex; message: string; data: Hex };

// Solidity's panic codes (docs: "Panic via assert and Error via require").
const panicMessages: Record<number, string> = {
  0: 'generic compiler panic',
  1: 'assertion failed',
  17: 'arithmetic overflow or underflow',
  18: 'division or modulo by zero',
  33: 'conversion into non-existent enum value',
  34: 'access to incorrectly encoded storage byte array',
  49: 'pop() on an empty array',
  50: 'array index out of bounds',
  65: 'out of memory',
  81: 'call to a zero-initialised internal function',
};

/** Decodes revert data with viem: Error(string) and Panic(uint256) always, custom errors when `abi` declares them. */
export function decodeRevert(data: Hex, abi: Abi = []): Revert {
  if (data === '0x') return { kind: 'empty', message: 'reverted without a reason', data: '0x' };
  try {
    const decoded = decodeErrorResult({ abi, data });
    const args = (decoded.args ?? []) as unknown[];
    if (decoded.errorName === 'Error') return { kind: 'error', name: 'Error', message: String(args[0]), data };
    if (decoded.errorName === 'Panic') {
      const code = Number(args[0]);
      return {
        kind: 'panic',
        name: 'Panic',
        code,
        message: `panic 0x${code.toString(16).padStart(2, '0')}: ${panicMessages[code] ?? 'unknown panic code'}`,
        data,
      };
    }
    const jsonArgs = toJsonValue(args) as unknown[];
    const inputs = 'inputs' in decoded.abiItem ? decoded.abiItem.inputs : [];
    const signature = `${decoded.errorName}(${inputs.map((input) => input.type).join(',')})`;
    return {
      kind: 'custom',
      name: decoded.errorName,
      signature,
      args: jsonArgs,
      message: `${decoded.errorName}(${jsonArgs.map((arg) => JSON.stringify(arg)).join(', ')})`,
      data,
    };
  } catch {
    return { kind: 'unknown', selector: data.slice(0, 10) as Hex, message: `reverted with unknown error ${data.slice(0, 10)}`, data };
  }
}

/** The revert data inside a viem error (the innermost cause carries the node's `data`), if it is one. */
function revertDataOf(error: unknown): Hex | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const inner = error.walk() as { data?: unknown };
  const data = typeof inner.data === 'object' && inner.data !== null ? (inner.data as { data?: unknown }).data : inner.data;
  return typeof data === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(data) ? (data as Hex) : undefined;
}

/**
 * Sorts a failed eth_call or eth_estimateGas: a revert comes back as a value for the caller to read; an unreachable
 * node is 503; anything else the node refused (insufficient funds, a bad nonce) is 409 with the node's words.
 */
export function revertOrThrow(error: unknown, abi: Abi = []): Revert {
  const data = revertDataOf(error);
  if (data !== undefined) return decodeRevert(data, abi);
  if (error instanceof BaseError && error.walk((cause) => cause instanceof HttpRequestError || cause instanceof TimeoutError)) {
    throw new ServiceError('unavailable', 'the chain RPC did not answer', { cause: error, details: { reason: 'rpc_unreachable' } });
  }
  const message = error instanceof BaseError ? error.shortMessage : error instanceof Error ? error.message : String(error);
  if (/revert/i.test(message)) return decodeRevert('0x', abi);
  throw new ServiceError('conflict', `the node refused: ${message}`, { cause: error, details: { reason: 'node_refused' } });
}
