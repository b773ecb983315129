import { Type } from 'typebox';
import type { Engine } from '../engine.ts';
import { callContract } from '../evm/call.ts';
import { AbiInput, Address, Args, ChainRef, ContractName, HexData, ProjectId, Wei } from './schemas.ts';
import { defineTool } from './tool.ts';

const CallInput = Type.Object(
  {
    to: Address,
    method: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: 'Function name, or signature such as transfer(address,uint256) when overloaded; omit to send data',
      }),
    ),
    args: Type.Optional(Args),
    abi: Type.Optional(AbiInput),
    contract: Type.Optional(ContractName),
    project_id: Type.Optional(ProjectId),
    data: Type.Optional(HexData),
    simulate_only: Type.Optional(
      Type.Boolean({ description: 'true (default): read with eth_call. false: sign and send a transaction under the custody caps' }),
    ),
    chain_id: Type.Optional(ChainRef),
    spend_cap_wei: Type.Optional(Wei),
    value: Type.Optional(Wei),
  },
  { additionalProperties: false },
);

export function callTool(engine: Engine) {
  return defineTool({
    operation: 'call',
    tool: 'tachyon_call',
    description:
      "Call a contract by method and args (ABI given, from a compiled contract, or known from a deployment) or by raw data. simulate_only=true (default) reads; false signs a transaction with the caller's wallet under the same caps as deploy. Chain defaults to the active chain.",
    input: CallInput,
    // A write when simulate_only=false: it may move funds or change state for good.
    annotations: { title: 'Call a contract', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    http: { method: 'POST', path: '/v1/call' },
    run: (input, context) => callContract(engine, input, context.callerDid),
  });
}
