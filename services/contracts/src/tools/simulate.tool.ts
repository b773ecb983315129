import { Type } from 'typebox';
import type { Engine } from '../engine.ts';
import { simulate } from '../evm/simulate.ts';
import { AbiInput, Address, ChainRef, ContractName, HexData, ProjectId, Wei } from './schemas.ts';
import { defineTool, readOnly } from './tool.ts';

const SimulateInput = Type.Object(
  {
    chain_id: ChainRef,
    to: Address,
    data: Type.Optional(HexData),
    from: Type.Optional(Address),
    value: Type.Optional(Wei),
    block: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Block tag (latest, pending, ...) or number; default latest' })),
    abi: Type.Optional(AbiInput),
    contract: Type.Optional(ContractName),
    project_id: Type.Optional(ProjectId),
  },
  { additionalProperties: false },
);

export function simulateTool(engine: Engine) {
  return defineTool({
    operation: 'simulate',
    tool: 'tachyon_simulate',
    description:
      'Dry-run a call (eth_call) on a chain at a block. Returns the raw return data, the decoded result when an ABI is known (given, named contract, or a contract this engine deployed), the gas a transaction would use, and a revert decoded: custom error name and arguments, Error(string) or panic code.',
    input: SimulateInput,
    annotations: { title: 'Simulate a call', ...readOnly, openWorldHint: true },
    http: { method: 'POST', path: '/v1/simulate' },
    run: (input, context) => simulate(engine, input, context.callerDid),
  });
}
