import { Type } from 'typebox';
import type { Engine } from '../engine.ts';
import { deploymentView, refreshSubmitted } from '../evm/deploy.ts';
import { limits } from '../limits.ts';
import { ChainRef, IdempotencyKey } from './schemas.ts';
import { defineTool, readOnly } from './tool.ts';

const LookupInput = Type.Object({ idempotency_key: IdempotencyKey, chain_id: ChainRef }, { additionalProperties: false });

export function registryLookupTool(engine: Engine) {
  return defineTool({
    operation: 'registry_lookup',
    tool: 'tachyon_registry_lookup',
    description: 'Look up a deployment by idempotency_key and chain: address, transaction hash and confirmation state, or found=false.',
    input: LookupInput,
    annotations: { title: 'Look up a deployment', ...readOnly, openWorldHint: true },
    http: { method: 'GET', path: '/v1/registry/lookup', query: LookupInput },
    run: async (input) => {
      const profile = await engine.chains.resolve(input.chain_id);
      const row = await engine.deployments.find(profile.chainId, input.idempotency_key);
      if (!row) return { found: false, idempotency_key: input.idempotency_key, chain: profile.id, chain_id: profile.chainId };
      return deploymentView(row.status === 'submitted' ? await refreshSubmitted(engine, profile, row) : row);
    },
  });
}

const ListQuery = Type.Object(
  {
    chain_id: Type.Optional(ChainRef),
    deployer_did: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Only deployments signed by this agent DID' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.pageSize.max, description: `Page size, default ${limits.pageSize.default}` })),
    before: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,17}$', description: 'next_before of the previous page' })),
  },
  { additionalProperties: false },
);

export function registryListTool(engine: Engine) {
  return defineTool({
    operation: 'registry_list',
    tool: undefined,
    description: 'Recorded deployments, newest first.',
    input: ListQuery,
    annotations: { title: 'List deployments', ...readOnly, openWorldHint: false },
    http: { method: 'GET', path: '/v1/registry/deployments', query: ListQuery },
    run: async (input) => {
      const chainId = input.chain_id === undefined ? undefined : (await engine.chains.resolve(input.chain_id)).chainId;
      const limit = input.limit ?? limits.pageSize.default;
      const rows = await engine.deployments.list({
        chainId,
        deployer: input.deployer_did,
        before: input.before === undefined ? undefined : BigInt(input.before),
        limit,
      });
      return { deployments: rows.map((row) => deploymentView(row)), next_before: rows.length === limit ? (rows.at(-1)?.seq.toString() ?? null) : null };
    },
  });
}
