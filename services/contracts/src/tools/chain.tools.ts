import { Type } from 'typebox';
import type { Engine } from '../engine.ts';
import { limits } from '../limits.ts';
import { defineTool, readOnly } from './tool.ts';

const ProfileId = Type.String({ minLength: 1, maxLength: limits.chainIdChars, description: 'Chain profile id: lowercase letters, digits and dashes' });

export function chainListTool(engine: Engine) {
  return defineTool({
    operation: 'chain_list',
    tool: 'tachyon_chain_list',
    description: 'List chain profiles (id, name, chain_id, explorer) and which one is active. RPC URLs are never shown.',
    input: Type.Object({}, { additionalProperties: false }),
    annotations: { title: 'List chains', ...readOnly, openWorldHint: false },
    http: { method: 'GET', path: '/v1/chains', query: Type.Object({}) },
    run: () => engine.chains.list(),
  });
}

const RegisterInput = Type.Object(
  {
    id: ProfileId,
    name: Type.String({ minLength: 1, maxLength: limits.chainNameChars }),
    rpc_url: Type.String({ minLength: 1, maxLength: limits.urlChars, description: 'http(s) JSON-RPC URL; it must answer eth_chainId with chain_id' }),
    chain_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'EVM chain id the RPC must serve' }),
    explorer: Type.Optional(Type.String({ minLength: 1, maxLength: limits.urlChars, description: 'Block explorer URL' })),
  },
  { additionalProperties: false },
);

export function chainRegisterTool(engine: Engine) {
  return defineTool({
    operation: 'chain_register',
    tool: 'tachyon_chain_register',
    description:
      'Register a chain profile. Its RPC URL is asked for its chain id first: a node serving another chain is refused. Registering the same profile again changes nothing; an id already used for other settings is refused.',
    input: RegisterInput,
    // Only ever adds a profile (an id cannot be taken over), and the same registration twice is one.
    annotations: { title: 'Register a chain', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    http: { method: 'POST', path: '/v1/chains' },
    run: (input) => engine.chains.register(input),
  });
}

export function chainUseTool(engine: Engine) {
  return defineTool({
    operation: 'chain_use',
    tool: undefined,
    description: 'Select the active chain (used when a call names none); the choice is kept across restarts.',
    input: Type.Object(
      { id: Type.String({ minLength: 1, maxLength: limits.chainIdChars, description: 'Chain profile id or numeric chain id' }) },
      { additionalProperties: false },
    ),
    annotations: { title: 'Select the active chain', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    http: { method: 'POST', path: '/v1/chains/use' },
    run: (input) => engine.chains.use(input.id),
  });
}
