import { ConfigError, type Env, read } from '@platform/kit/config';

/**
 * One more MCP server whose tools the agent may call: Streamable HTTP at `url` (with the bearer held in the setting
 * `token_env`), or a command spoken to over stdio (the connector's proxy). A stdio child gets only PATH, HOME and the
 * settings named in `env_pass`, never the daemon's own secrets, except with `agent_key: true`: then it also gets the
 * daemon's agent key seed and user id (PLATFORM_AGENT_KEY, PLATFORM_AGENT_USER_ID), so it can call services as this
 * agent (the connector's proxy handshakes with them). The key may come from a file, hence not `env_pass`.
 */
export type McpServerSetting =
  | { readonly name: string; readonly transport: 'http'; readonly url: string; readonly token: string }
  | {
      readonly name: string;
      readonly transport: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      /** Hand the child this daemon's agent key (added when the provider is made, from the loaded identity). */
      readonly agentKey?: true;
    };

/** Tool names are `<server>.<tool>`; these servers are the daemon's own. */
export const reservedServerNames = ['memory', 'contracts', 'alarms', 'payments', 'market', 'model'] as const;

const namePattern = /^[a-z][a-z0-9_-]{0,31}$/;
const settingName = /^[A-Z][A-Z0-9_]{0,127}$/;

function problem(index: number, what: string): ConfigError {
  return new ConfigError(`DAEMON_MCP_SERVERS[${index}] ${what}`);
}

function one(entry: unknown, index: number, env: Env): McpServerSetting {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw problem(index, 'must be an object');
  const { name, url, token_env, command, args, env_pass, agent_key, ...rest } = entry as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw problem(index, `has an unknown field "${unknown}" (name, url, token_env, command, args, env_pass, agent_key)`);
  if (typeof name !== 'string' || !namePattern.test(name)) throw problem(index, 'name must be 1–32 of a-z 0-9 _ - starting with a letter');
  if ((reservedServerNames as readonly string[]).includes(name))
    throw problem(index, `name "${name}" is one of the daemon's own (${reservedServerNames.join(', ')})`);
  if ((url === undefined) === (command === undefined)) throw problem(index, 'needs exactly one of url (Streamable HTTP) or command (stdio)');
  if (agent_key !== undefined && typeof agent_key !== 'boolean') throw problem(index, 'agent_key must be true or false');
  if (agent_key === true && url !== undefined) throw problem(index, 'agent_key is for stdio servers (command) only: the key never travels over HTTP');
  if (typeof url === 'string') {
    read.url({ url }, 'url', url, ['http:', 'https:'], false);
    if (token_env !== undefined && (typeof token_env !== 'string' || !settingName.test(token_env))) throw problem(index, 'token_env must name a setting');
    return Object.freeze({ name, transport: 'http', url, token: token_env === undefined ? '' : read.string(env, token_env as string, '') });
  }
  if (typeof command !== 'string' || command === '') throw problem(index, 'command must be a non-empty string');
  if (args !== undefined && (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string'))) throw problem(index, 'args must be an array of strings');
  if (env_pass !== undefined && (!Array.isArray(env_pass) || !env_pass.every((item) => typeof item === 'string' && settingName.test(item))))
    throw problem(index, 'env_pass must be an array of setting names');
  const childEnv: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', ...((env_pass as string[] | undefined) ?? [])]) {
    const value = env[key];
    if (value !== undefined) childEnv[key] = value;
  }
  return Object.freeze({
    name,
    transport: 'stdio',
    command,
    args: Object.freeze([...((args as string[] | undefined) ?? [])]),
    env: Object.freeze(childEnv),
    ...(agent_key === true ? { agentKey: true as const } : {}),
  });
}

/**
 * DAEMON_MCP_SERVERS: a JSON array, e.g.
 * `[{"name":"connector","command":"npx","args":["platform","mcp","connector"],"env_pass":["PLATFORM_CONNECTOR_URL","PLATFORM_CONNECTOR_TOKEN"],"agent_key":true}]`.
 */
export function readMcpServers(env: Env): readonly McpServerSetting[] {
  const raw = read.optionalString(env, 'DAEMON_MCP_SERVERS');
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('DAEMON_MCP_SERVERS must be a JSON array of servers');
  }
  if (!Array.isArray(parsed) || parsed.length > 16) throw new ConfigError('DAEMON_MCP_SERVERS must be a JSON array of at most 16 servers');
  const servers = parsed.map((entry, index) => one(entry, index, env));
  const names = new Set<string>();
  for (const server of servers) {
    if (names.has(server.name)) throw new ConfigError(`DAEMON_MCP_SERVERS names "${server.name}" twice`);
    names.add(server.name);
  }
  return Object.freeze(servers);
}
