import type { KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentKey, agentKeyFromSeed } from '@platform/client/agent-key';
import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import { userIdFromSettingOrFile } from '@platform/kit/user-id-file';

/** Who this daemon is: the user it serves and the agent key that signs its journal and authenticates it to services. */
export interface AgentIdentity {
  readonly userId: string;
  readonly did: string;
  readonly publicKeyHex: string;
  /** Signs journal envelopes. */
  readonly privateKey: KeyObject;
  /** Signs service handshakes and settlement intents. */
  readonly agentKey: AgentKey;
  /** Where the key came from, safe to log: the setting's name or the file's path. */
  readonly keySource: string;
}

/**
 * Loads (or, in development, creates once) the daemon's identity, and writes its public half to
 * DATA_DIR/identity.json so a journal copied out of the folder can be verified offline.
 *
 * @example const identity = loadIdentity({ userId: config.userId, agentKeyHex: config.agentKeyHex, dataDir: config.dataDir })
 */
export function loadIdentity(options: { userId: string; agentKeyHex: string; dataDir: string }): AgentIdentity {
  const userId = userIdFromSettingOrFile(options.userId, options.dataDir);
  const seed = secretFromSettingOrFile(options.agentKeyHex, options.dataDir, 'agent.key', 'DAEMON_AGENT_KEY');
  const agentKey = agentKeyFromSeed(seed.hex, userId);
  const identity: AgentIdentity = {
    userId,
    did: agentKey.did,
    publicKeyHex: agentKey.publicKeyHex,
    privateKey: privateKeyFromSeed(seed.hex),
    agentKey,
    keySource: seed.source,
  };
  const card = `${JSON.stringify({ user_id: userId, did: identity.did, public_key: identity.publicKeyHex }, null, 2)}\n`;
  try {
    if (readFileSync(join(options.dataDir, 'identity.json'), 'utf8') === card) return identity;
  } catch {
    // Written below.
  }
  mkdirSync(options.dataDir, { recursive: true });
  writeFileSync(join(options.dataDir, 'identity.json'), card, { mode: 0o644 });
  return identity;
}
