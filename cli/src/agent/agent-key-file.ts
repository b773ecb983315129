import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type AgentKey, agentKeyFromSeed, generateAgentKey } from '@platform/client/agent-key';
import { CommandFailure, UsageError } from './command-output.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** What the key file holds. `did` and `public_key` follow from the seed and are kept for people reading the file. */
interface KeyFile {
  version: 1;
  user_id: string;
  seed: string;
  did: string;
  public_key: string;
}

const userIdPattern = /^[A-Za-z0-9._-]{1,128}$/;
const seedPattern = /^[0-9a-f]{64}$/;

/** PLATFORM_AGENT_FILE, else `$XDG_CONFIG_HOME/platform/agent.json`, else `~/.config/platform/agent.json`. */
export function agentKeyPath(env: Env): string {
  if (env.PLATFORM_AGENT_FILE) return resolve(env.PLATFORM_AGENT_FILE);
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'platform', 'agent.json');
}

/**
 * Writes a new key file, readable by its owner only (0600, its folder 0700), and never over an existing one: a
 * key replaced by accident is an identity and a balance lost.
 */
export function createAgentKeyFile(path: string, userId: string = randomUUID()): { key: AgentKey; userId: string } {
  if (!userIdPattern.test(userId)) throw new UsageError('--user-id must be 1-128 of A-Z a-z 0-9 . _ - (it becomes the DID label)');
  const key = generateAgentKey(userId);
  const file: KeyFile = { version: 1, user_id: userId, seed: key.seedHex, did: key.did, public_key: key.publicKeyHex };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new CommandFailure(`${path} already exists; not overwriting an agent key (move it away, or set PLATFORM_AGENT_FILE / --file to another path)`);
    throw error;
  }
  return { key, userId };
}

/**
 * The agent key the commands sign with: PLATFORM_AGENT_KEY (seed) with PLATFORM_AGENT_USER_ID when set (how a
 * daemon hands its key to the tools it runs), else the key file. A key file others can read is refused, as ssh
 * refuses such a private key.
 */
export function loadAgentKey(env: Env): { key: AgentKey; userId: string; source: string } {
  if (env.PLATFORM_AGENT_KEY) {
    if (!seedPattern.test(env.PLATFORM_AGENT_KEY)) throw new CommandFailure('PLATFORM_AGENT_KEY must be the agent key seed, 64 lowercase hex characters');
    const userId = env.PLATFORM_AGENT_USER_ID ?? '';
    if (!userIdPattern.test(userId)) throw new CommandFailure('PLATFORM_AGENT_USER_ID must be set with PLATFORM_AGENT_KEY (1-128 of A-Z a-z 0-9 . _ -)');
    return { key: agentKeyFromSeed(env.PLATFORM_AGENT_KEY, userId), userId, source: 'PLATFORM_AGENT_KEY' };
  }
  const path = agentKeyPath(env);
  let mode: number;
  let text: string;
  try {
    mode = statSync(path).mode;
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CommandFailure(`no agent key at ${path}; create one with \`platform agent new\``);
    throw new CommandFailure(`cannot read the agent key ${path}: ${(error as Error).message}`);
  }
  if ((mode & 0o077) !== 0) throw new CommandFailure(`${path} can be read by others (mode ${(mode & 0o777).toString(8)}); run \`chmod 600 ${path}\``);
  return { ...keyFromFile(text, path), source: path };
}

function keyFromFile(text: string, path: string): { key: AgentKey; userId: string } {
  let file: Partial<KeyFile>;
  try {
    file = JSON.parse(text) as Partial<KeyFile>;
  } catch {
    throw new CommandFailure(`${path} is not JSON; it should hold {"user_id", "seed"} as \`platform agent new\` writes it`);
  }
  if (typeof file.seed !== 'string' || !seedPattern.test(file.seed)) throw new CommandFailure(`${path}: seed must be 64 lowercase hex characters`);
  if (typeof file.user_id !== 'string' || !userIdPattern.test(file.user_id)) throw new CommandFailure(`${path}: user_id must be 1-128 of A-Z a-z 0-9 . _ -`);
  const key = agentKeyFromSeed(file.seed, file.user_id);
  // A hand-edited DID that no longer matches the seed would show one identity and sign as another.
  if ((file.did !== undefined && file.did !== key.did) || (file.public_key !== undefined && file.public_key !== key.publicKeyHex))
    throw new CommandFailure(`${path}: did or public_key does not match the seed`);
  return { key, userId: file.user_id };
}
