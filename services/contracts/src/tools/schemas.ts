import { Type } from 'typebox';
import { limits } from '../limits.ts';

/** Field schemas shared by several tools, with the descriptions MCP clients show to the model. */

export const Sources = Type.Record(Type.String({ maxLength: limits.sourcePathChars }), Type.String(), {
  description:
    'Workdir-relative path → Solidity source. Contracts under src/, tests under test/ (scripts under script/). forge-std/... and @openzeppelin/contracts/... imports resolve by themselves.',
});
export const ProjectId = Type.String({ minLength: 1, maxLength: limits.projectIdChars, description: 'Project id; defaults to a hash of the sources' });
export const Optimize = Type.Boolean({ description: 'Run the solc optimizer (200 runs); default false' });
export const ViaIr = Type.Boolean({ description: 'Compile through the IR pipeline; default false' });
export const ChainRef = Type.String({
  minLength: 1,
  maxLength: limits.chainIdChars,
  description: 'Chain profile id (local, primary-mainnet, ...) or numeric EVM chain id',
});
export const Address = Type.String({ minLength: 42, maxLength: 42, description: '0x-prefixed 20-byte address' });
export const HexData = Type.String({ maxLength: limits.hexDataChars, description: '0x-prefixed hex bytes' });
export const Wei = Type.String({ minLength: 1, maxLength: 80, description: 'Amount in wei: decimal or 0x hex string' });
export const ContractName = Type.String({
  minLength: 1,
  maxLength: limits.contractNameChars,
  description: 'Contract name, or <path>:<name> when several files define it',
});
export const AbiInput = Type.Unknown({ description: 'Contract ABI: the JSON array solc writes, or an object with it under abi' });
export const Args = Type.Array(Type.Unknown(), {
  maxItems: limits.args,
  description: 'Arguments in ABI order. Integers as JSON integers or decimal/0x strings, addresses and bytes as 0x hex, tuples as arrays or objects',
});
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: limits.idempotencyKeyChars,
  description: 'Deduplicates deployments per chain: the same key returns the recorded deployment',
});
