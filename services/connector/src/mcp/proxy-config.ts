import { ConfigError, type Env, read } from '@platform/kit/config';
import { type LogLevel, logLevels } from '@platform/kit/logger';

/** The stdio proxy's settings: where the service is, the transport bearer, and whose key calls it. */
export interface ProxyConfig {
  readonly connectorUrl: string;
  readonly transportToken: string;
  /** The daemon's ed25519 seed (64 hex): the proxy handshakes as the daemon's DID, so the owner is the daemon's user. */
  readonly agentKeyHex: string;
  readonly agentUserId: string;
  /** CONNECTOR_TOOL_REGISTRY; unset: generated in memory from this release's connector definitions. */
  readonly registryFile: string | undefined;
  readonly logLevel: LogLevel;
}

const userIdPattern = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Parsed once at start; a bad setting stops the proxy with one line on stderr naming it (never its value, for the key).
 *
 * @example loadProxyConfig(process.env)   // PLATFORM_AGENT_KEY and PLATFORM_AGENT_USER_ID are required
 */
export function loadProxyConfig(env: Env): ProxyConfig {
  const agentKeyHex = read.string(env, 'PLATFORM_AGENT_KEY', '');
  if (!/^[0-9a-fA-F]{64}$/.test(agentKeyHex))
    throw new ConfigError(
      'PLATFORM_AGENT_KEY must be the agent key seed, 64 hex characters (a daemon passes its own with "agent_key": true in DAEMON_MCP_SERVERS)',
    );
  const agentUserId = read.string(env, 'PLATFORM_AGENT_USER_ID', '');
  if (!userIdPattern.test(agentUserId))
    throw new ConfigError('PLATFORM_AGENT_USER_ID must be the user id the agent key belongs to (1–128 of A-Z a-z 0-9 . _ -)');
  const logLevel = read.string(env, 'LOG_LEVEL', 'info');
  if (!(logLevels as readonly string[]).includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${logLevel}"`);
  return Object.freeze({
    connectorUrl: read.url(env, 'PLATFORM_CONNECTOR_URL', 'http://127.0.0.1:9094', ['http:', 'https:'], false),
    transportToken: read.string(env, 'PLATFORM_CONNECTOR_TOKEN', ''),
    agentKeyHex: agentKeyHex.toLowerCase(),
    agentUserId,
    registryFile: read.optionalString(env, 'CONNECTOR_TOOL_REGISTRY'),
    logLevel: logLevel as LogLevel,
  });
}
