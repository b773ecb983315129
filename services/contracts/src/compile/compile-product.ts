import type { Diagnostic } from './diagnostics.ts';

/** Link references as solc writes them: file → library → byte positions. */
export type LinkReferences = Record<string, Record<string, Array<{ start: number; length: number }>>>;

/** One contract of a build, as the engine keeps it (the parts tests, deploys and callers need). */
export interface CompiledContract {
  source: string;
  name: string;
  abi: unknown[];
  /** 0x-prefixed creation code; `0x` for interfaces and abstract contracts. */
  bytecode: string;
  deployedBytecode: string;
  linkReferences: LinkReferences;
  deployedLinkReferences: LinkReferences;
}

/** What one solc run produced; the build info bytes are only there when the build succeeded. */
export interface CompileProduct {
  solcVersion: string;
  solcLongVersion: string;
  diagnostics: Diagnostic[];
  contracts: CompiledContract[];
  /** Hardhat 3 build info (input) and build info output, UTF-8 JSON: what EDR reads for source-level traces. */
  buildInfo: Uint8Array | null;
  buildInfoOutput: Uint8Array | null;
}
