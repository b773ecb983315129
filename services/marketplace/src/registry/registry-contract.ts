import { readFileSync } from 'node:fs';
import { type Hex, parseAbi } from 'viem';

/**
 * The service registry as the marketplace calls it. The ABI is written out here (viem then types every call);
 * `test/contracts.test.ts` holds it equal to what solc made of `contracts/src/ServiceRegistry.sol`, and the bytecode
 * for development deploys comes from `contracts/artifacts.json`, built by the contract engine.
 */
export const registryAbi = parseAbi([
  'constructor(address operator_)',
  'function operator() view returns (address)',
  'function register(bytes32 serviceId, bytes32 manifestHash, address owner)',
  'function services(bytes32 serviceId) view returns (address owner, bytes32 manifestHash, uint64 updatedAt)',
  'function transferOperator(address newOperator)',
  'event ServiceRegistered(bytes32 indexed serviceId, address indexed owner, bytes32 manifestHash)',
  'event ManifestUpdated(bytes32 indexed serviceId, bytes32 manifestHash)',
  'event OperatorTransferred(address indexed previousOperator, address indexed newOperator)',
  'error NotOperator()',
  'error ZeroAddress()',
  'error ZeroServiceId()',
  'error ZeroManifestHash()',
  'error OwnerMismatch(bytes32 serviceId, address registeredOwner)',
]);

/** A listing's id on chain: its UUID's 16 bytes right-aligned in a bytes32 (as settlement keys withdrawal ids). */
export function serviceKey(listingId: string): Hex {
  const hex = listingId.replaceAll('-', '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${JSON.stringify(listingId)}`);
  return `0x${hex.padStart(64, '0')}`;
}

export interface RegistryArtifacts {
  compiler: unknown;
  sources_sha256: string;
  contracts: Record<'ServiceRegistry', { abi: unknown[]; bytecode: Hex }>;
}

let loaded: RegistryArtifacts | undefined;

/** The compiled registry (read on first use: only a development deploy needs the bytecode). */
export function registryArtifacts(): RegistryArtifacts {
  loaded ??= JSON.parse(readFileSync(new URL('../../contracts/artifacts.json', import.meta.url), 'utf8')) as RegistryArtifacts;
  return loaded;
}
