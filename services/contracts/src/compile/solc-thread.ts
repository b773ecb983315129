import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import type { CompiledContract, CompileProduct, LinkReferences } from './compile-product.ts';
import { type SolcError, toDiagnostics } from './diagnostics.ts';
import { ImportResolver, type ImportResult } from './import-resolver.ts';
import { standardJsonInput } from './solc-input.ts';
import type { CompileSettings, SourceMap } from './sources.ts';
import { cacheWasmTableReads } from './wasm-table-reads.ts';

/** The far side of SolcWorker: solc-js, loaded once (about 300 ms) and kept warm for every compile after. */

export type SolcRequest = { id: number; op: 'compile'; sources: SourceMap; settings: CompileSettings; buildHash: string };
export type SolcReply = { id: number; ok: true; value: CompileProduct } | { id: number; ok: false; message: string };
export type SolcReady = { ready: true; version: string; longVersion: string };

interface SolcJs {
  version(): string;
  compile(input: string, callbacks: { import: (path: string) => ImportResult }): string;
}

interface SolcContractOutput {
  abi?: unknown[];
  evm?: {
    bytecode?: { object?: string; linkReferences?: LinkReferences };
    deployedBytecode?: { object?: string; linkReferences?: LinkReferences };
  };
}

interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

cacheWasmTableReads();
const solc = createRequire(import.meta.url)('solc') as SolcJs;
const longVersion = solc.version();
const version = longVersion.split('+')[0] as string;
const resolver = new ImportResolver();
const tooManyWarnings = '4591';

function hex(object: string | undefined): string {
  return `0x${object ?? ''}`;
}

function contractsOf(output: SolcOutput): CompiledContract[] {
  const contracts: CompiledContract[] = [];
  for (const [source, byName] of Object.entries(output.contracts ?? {})) {
    for (const [name, contract] of Object.entries(byName)) {
      contracts.push({
        source,
        name,
        abi: contract.abi ?? [],
        bytecode: hex(contract.evm?.bytecode?.object),
        deployedBytecode: hex(contract.evm?.deployedBytecode?.object),
        linkReferences: contract.evm?.bytecode?.linkReferences ?? {},
        deployedLinkReferences: contract.evm?.deployedBytecode?.linkReferences ?? {},
      });
    }
  }
  return contracts;
}

function compile(request: SolcRequest): CompileProduct {
  const input = standardJsonInput(request.sources, request.settings);
  const inputJson = JSON.stringify(input);
  // Library files solc read, to complete the build info: EDR maps bytecode to source text through it.
  const imported: Record<string, { content: string }> = {};
  const outputJson = solc.compile(inputJson, {
    import: (path) => {
      const result = resolver.resolve(path);
      if ('contents' in result) imported[path] = { content: result.contents };
      return result;
    },
  });
  const output = JSON.parse(outputJson) as SolcOutput;
  // Warnings inside forge-std and OpenZeppelin are not the caller's to fix (nor is solc's note that it stopped
  // counting them, code 4591); errors anywhere are shown.
  const ownOrError = (output.errors ?? []).filter(
    (error) =>
      error.severity === 'error' || (error.sourceLocation ? request.sources[error.sourceLocation.file] !== undefined : error.errorCode !== tooManyWarnings),
  );
  const diagnostics = toDiagnostics(ownOrError, (file) => {
    const own = request.sources[file];
    if (own !== undefined) return own;
    const library = resolver.resolve(file);
    return 'contents' in library ? library.contents : undefined;
  });
  const failed = diagnostics.some((diagnostic) => diagnostic.severity === 'error');
  // Hardhat 3's build info layout, which EDR parses; the id must look like Hardhat's (solc-<version>-<hex>).
  const buildId = `solc-${version.replaceAll('.', '_')}-${request.buildHash}`;
  const encoder = new TextEncoder();
  return {
    solcVersion: version,
    solcLongVersion: longVersion,
    diagnostics,
    contracts: failed ? [] : contractsOf(output),
    buildInfo: failed
      ? null
      : encoder.encode(
          JSON.stringify({
            _format: 'hh3-sol-build-info-1',
            id: buildId,
            solcVersion: version,
            solcLongVersion: longVersion,
            userSourceNameMap: {},
            input: { ...input, sources: { ...input.sources, ...imported } },
          }),
        ),
    // solc's own output text is spliced in rather than parsed and written again: it is megabytes of AST.
    buildInfoOutput: failed ? null : encoder.encode(`{"_format":"hh3-sol-build-info-output-1","id":${JSON.stringify(buildId)},"output":${outputJson}}`),
  };
}

parentPort?.on('message', (request: SolcRequest) => {
  let reply: SolcReply;
  try {
    reply = { id: request.id, ok: true, value: compile(request) };
  } catch (error) {
    reply = { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  const transfer = reply.ok ? [reply.value.buildInfo, reply.value.buildInfoOutput].flatMap((bytes) => (bytes ? [bytes.buffer as ArrayBuffer] : [])) : [];
  parentPort?.postMessage(reply, transfer);
});

parentPort?.postMessage({ ready: true, version, longVersion } satisfies SolcReady);
