import type { CompileSettings, SourceMap } from './sources.ts';

/**
 * Everything Hardhat 3 asks solc for (its DEFAULT_OUTPUT_SELECTION): EDR's test runner parses these build infos
 * for stack traces and refuses one without opcodes or source maps.
 */
const outputSelection = {
  '*': {
    '': ['ast'],
    '*': [
      'abi',
      'evm.bytecode.linkReferences',
      'evm.bytecode.object',
      'evm.bytecode.opcodes',
      'evm.bytecode.sourceMap',
      'evm.deployedBytecode.immutableReferences',
      'evm.deployedBytecode.linkReferences',
      'evm.deployedBytecode.object',
      'evm.deployedBytecode.opcodes',
      'evm.deployedBytecode.sourceMap',
      'evm.methodIdentifiers',
    ],
  },
};

/** solc's standard JSON input for a project; the EVM version is solc's default (osaka for 0.8.37). */
export function standardJsonInput(sources: SourceMap, settings: CompileSettings) {
  return {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([path, content]) => [path, { content }])),
    settings: {
      optimizer: { enabled: settings.optimize, runs: 200 },
      viaIR: settings.viaIr,
      outputSelection,
    },
  };
}
