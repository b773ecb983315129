import { existsSync } from 'node:fs';
import type { AgentKey } from '@platform/client/agent-key';
import { readEnvelope } from '@platform/client/service-session';
import { parseDid } from '@platform/kit/auth/did';
import { wakeKeyMessage } from '@platform/kit/auth/wake-key-message';
import { agentKeyPath, createAgentKeyFile, loadAgentKey } from './agent-key-file.ts';
import { CommandFailure } from './command-output.ts';
import { type CommandContext, type Env, useService } from './service-settings.ts';

/** What `platform agent use` did: the key (made now when there was none), and the agent it is linked with. */
export interface AgentUse {
  did: string;
  public_key: string;
  user_id: string;
  file: string;
  /** The agent's own DID: alarms made with the key wake it. */
  agent_did: string;
  /** The key file was written now, for the agent's user. */
  key_created: boolean;
  /** The link is new (false: it was linked before). */
  linked: boolean;
}

/**
 * `platform agent use`: makes this command line act for the person's own agent. It asks the daemon (DAEMON_URL and
 * PLATFORM_DAEMON_TOKEN, as `platform delegate`; through the router, a `platform token` names the user) who it is,
 * makes the key file for that user when there is none, and links the key with the agent: the key signs the link
 * text, and only its public key is sent. From then on the alarms the CLI makes wake that agent.
 */
export async function useAgent(context: CommandContext, env: Env, urlFlag: string | undefined): Promise<AgentUse> {
  const daemon = useService(context, 'daemon', urlFlag);
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    if (daemon.token) headers.authorization = `Bearer ${daemon.token}`;
    const deadline = Date.now() + retryForMs;
    for (;;) {
      const response = await fetch(`${daemon.url.replace(/\/+$/, '')}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
      // The router answers 503 (retry shortly) while it wakes the agent's environment: both requests are safe to repeat.
      const wait = retryAfterMs(response);
      if (wait === undefined || Date.now() + wait > deadline) return readEnvelope<T>(response);
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
  const me = await call<{ user_id: string; did: string }>('GET', '/me');
  const { key, userId, file, created } = keyFor(env, me.user_id);
  if (parseDid(key.did)?.owner !== parseDid(me.did)?.owner)
    throw new CommandFailure(
      `the agent key in ${file} is user ${userId}'s, and this agent serves user ${me.user_id}: give another key file (--file) to act for it`,
    );
  const signature = key.sign(wakeKeyMessage(me.did, key.did));
  const linked = await call<{ created: boolean }>('PUT', `/wake-keys/${encodeURIComponent(key.did)}`, { public_key: key.publicKeyHex, signature });
  return { did: key.did, public_key: key.publicKeyHex, user_id: userId, file, agent_did: me.did, key_created: created, linked: linked.created };
}

/** How long `agent use` keeps asking an environment that is waking (503 with Retry-After). */
const retryForMs = 30_000;

/** The wait a 503 asks for (its Retry-After, at most 5 s; 1 s without one), or undefined for any other answer. */
function retryAfterMs(response: Response): number | undefined {
  if (response.status !== 503) return undefined;
  const seconds = Number(response.headers.get('retry-after') ?? '1');
  return Math.min(Number.isFinite(seconds) && seconds > 0 ? seconds : 1, 5) * 1000;
}

/** The key the commands use (PLATFORM_AGENT_KEY or the file), or a new key file for the agent's user when there is none. */
function keyFor(env: Env, agentUserId: string): { key: AgentKey; userId: string; file: string; created: boolean } {
  const path = agentKeyPath(env);
  if (!env.PLATFORM_AGENT_KEY && !existsSync(path)) {
    const made = createAgentKeyFile(path, agentUserId);
    return { ...made, file: path, created: true };
  }
  const { key, userId, source } = loadAgentKey(env);
  return { key, userId, file: source, created: false };
}
