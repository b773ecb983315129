import { randomBytes, randomUUID } from 'node:crypto';
import { didFor } from '@platform/kit/auth/did';
import { privateKeyFromSeed, publicKeyHex, signMessage } from '@platform/kit/auth/ed25519';
import type { AgentKey } from './agent-key-type.ts';

export type { AgentKey } from './agent-key-type.ts';

/**
 * The agent key for a seed; the DID label is the owner's user id.
 *
 * @example const key = agentKeyFromSeed(process.env.AGENT_SEED, userId)
 */
export function agentKeyFromSeed(seedHex: string, ownerLabel: string): AgentKey {
  const privateKey = privateKeyFromSeed(seedHex);
  const publicHex = publicKeyHex(privateKey);
  return { seedHex, publicKeyHex: publicHex, did: didFor(ownerLabel, publicHex), sign: (message) => signMessage(privateKey, message) };
}

/** A new random agent key; the owner label defaults to a fresh user UUID. */
export function generateAgentKey(ownerLabel: string = randomUUID()): AgentKey {
  return agentKeyFromSeed(randomBytes(32).toString('hex'), ownerLabel);
}
