import { Type } from 'typebox';
import type { Engine } from '../engine.ts';
import { deploy } from '../evm/deploy.ts';
import { countOutcome, failureOutcome } from '../metrics.ts';
import { Args, ChainRef, ContractName, IdempotencyKey, ProjectId, Wei } from './schemas.ts';
import { defineTool } from './tool.ts';

const DeployInput = Type.Object(
  {
    idempotency_key: IdempotencyKey,
    chain_id: ChainRef,
    contract: ContractName,
    project_id: Type.Optional(ProjectId),
    constructor_args: Type.Optional(Args),
    spend_cap_wei: Type.Optional(Wei),
    value: Type.Optional(Wei),
  },
  { additionalProperties: false },
);

export function deployTool(engine: Engine) {
  return defineTool({
    operation: 'deploy',
    tool: 'tachyon_deploy',
    description:
      "Deploy a compiled contract with the caller's embedded wallet: signs, broadcasts, waits for the receipt and records address, transaction hash and confirmation state. The same idempotency_key and chain return the recorded deployment (never a second transaction). Refused before signing when value plus maximum fee exceeds spend_cap_wei or the custody policy.",
    input: DeployInput,
    // Spends the wallet's funds, which cannot be undone.
    annotations: { title: 'Deploy a contract', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    http: { method: 'POST', path: '/v1/deploy' },
    run: (input, context) =>
      countOutcome(
        engine.metrics.deployed,
        () => deploy(engine, input, context.callerDid),
        (result) => (result.replayed ? 'replayed' : result.status === 'pending' ? 'submitted' : result.status),
        failureOutcome,
      ),
  });
}
