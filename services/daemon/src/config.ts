import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';
import { readModelChoice, readModelLabels } from '@platform/kit/model-labels';
import { type McpServerSetting, readMcpServers } from './tools/mcp-server-settings.ts';

/** A service the daemon calls: its base URL and the bearer it presents (empty: none). */
export interface ServiceLink {
  readonly url: string;
  readonly token: string;
}

export type AsyncStrategy = 'enqueue' | 'reject' | 'interrupt';
export const asyncStrategies: readonly AsyncStrategy[] = ['enqueue', 'reject', 'interrupt'];

export interface DaemonModels {
  readonly compiler: string;
  /** The second compiler model, asked when the first is not confident (the spec's M2). */
  readonly compilerEscalation: string;
  readonly planner: string;
  readonly executor: string;
}

export interface DaemonConfig extends BaseConfig {
  /** The one user this process serves: the DID label and the owner every service scopes to. Empty: from DATA_DIR. */
  readonly userId: string;
  /** 64 hex ed25519 seed; empty: generated once into DATA_DIR (development only). */
  readonly agentKeyHex: string;
  /** Bearer of every route but /healthz; empty leaves them open (development only). */
  readonly token: string;
  readonly production: boolean;
  readonly gateway: ServiceLink | undefined;
  readonly memory: ServiceLink | undefined;
  readonly contracts: ServiceLink | undefined;
  readonly scheduler: ServiceLink | undefined;
  readonly settlement: ServiceLink | undefined;
  /** The marketplace: no transport bearer (its callers identify by the DID handshake and pay by signed holds). */
  readonly marketplace: ServiceLink | undefined;
  /** More MCP servers whose tools the agent may use (the connector arrives here). */
  readonly mcpServers: readonly McpServerSetting[];
  readonly models: DaemonModels;
  /** Below this compiler confidence (0–1) the escalation model is asked. */
  readonly compileConfidence: number;
  readonly gateTimeoutMs: number;
  readonly asyncStrategy: AsyncStrategy;
  readonly maxQueuedIntents: number;
  readonly modelTimeoutMs: number;
  readonly modelRetries: number;
  readonly toolTimeoutMs: number;
  /** Tools (qualified names) the user exempted from the approval gate; money and deploys are never exempt. */
  readonly ungatedTools: readonly string[];
  readonly heartbeatMs: number;
  /** Bytes of unsent events a subscriber may have waiting; past it, its events are dropped. */
  readonly subscriberBufferBytes: number;
  readonly maxSubscribers: number;
}

function link(env: Env, urlName: string, tokenName: string | undefined): ServiceLink | undefined {
  const url = read.optionalString(env, urlName);
  if (url === undefined) return undefined;
  read.url(env, urlName, url, ['http:', 'https:'], false);
  return Object.freeze({ url: url.replace(/\/+$/, ''), token: tokenName === undefined ? '' : read.string(env, tokenName, '') });
}

function readModels(env: Env): DaemonModels {
  const labels = readModelLabels(env);
  return Object.freeze({
    compiler: readModelChoice(env, 'PLATFORM_COMPILER_MODEL', labels, 'compiler') ?? labels.M1,
    compilerEscalation: readModelChoice(env, 'PLATFORM_COMPILER_ESCALATION_MODEL', labels, 'compiler') ?? labels.M2,
    // The spec's version 1 pins the planner to M2 and the executor to M4.
    planner: readModelChoice(env, 'PLATFORM_PLANNER_MODEL', labels, 'planner') ?? labels.M2,
    executor: readModelChoice(env, 'PLATFORM_EXECUTOR_MODEL', labels, 'executor') ?? labels.M4,
  });
}

const userIdPattern = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The daemon's settings, parsed once. In production (NODE_ENV=production, unless DAEMON_DEV=true) the user id, the
 * agent key and the bearer are required: a generated identity belongs to development only.
 */
export function loadConfig(env: Env): DaemonConfig {
  const base = readBaseConfig(env, { service: 'daemon', defaultPort: 8080 });
  const production = read.string(env, 'NODE_ENV', '') === 'production' && !read.boolean(env, 'DAEMON_DEV', false);
  const userId = read.string(env, 'DAEMON_USER_ID', '');
  if (userId !== '' && !userIdPattern.test(userId)) throw new ConfigError(`DAEMON_USER_ID must be 1–128 of A-Z a-z 0-9 . _ - (a user id), got "${userId}"`);
  const agentKeyHex = read.string(env, 'DAEMON_AGENT_KEY', '');
  if (agentKeyHex !== '' && !/^[0-9a-fA-F]{64}$/.test(agentKeyHex)) throw new ConfigError('DAEMON_AGENT_KEY must be 64 hex characters (an ed25519 seed)');
  const token = read.string(env, 'PLATFORM_DAEMON_TOKEN', '');
  if (production) {
    for (const [name, value] of [
      ['DAEMON_USER_ID', userId],
      ['DAEMON_AGENT_KEY', agentKeyHex],
      ['PLATFORM_DAEMON_TOKEN', token],
    ] as const)
      if (value === '') throw new ConfigError(`${name} is required in production (or set DAEMON_DEV=true)`);
  }
  const asyncStrategy = read.string(env, 'DAEMON_ASYNC_STRATEGY', 'enqueue') as AsyncStrategy;
  if (!asyncStrategies.includes(asyncStrategy))
    throw new ConfigError(`DAEMON_ASYNC_STRATEGY must be one of ${asyncStrategies.join(', ')}, got "${asyncStrategy}"`);
  return Object.freeze({
    ...base,
    userId,
    agentKeyHex: agentKeyHex.toLowerCase(),
    token,
    production,
    gateway: link(env, 'PLATFORM_GATEWAY_URL', 'PLATFORM_GATEWAY_TOKEN'),
    memory: link(env, 'PLATFORM_MEMORY_URL', 'MEMORY_MCP_TOKEN'),
    contracts: link(env, 'PLATFORM_CONTRACTS_URL', 'PLATFORM_CONTRACT_TOKEN'),
    scheduler: link(env, 'PLATFORM_SCHEDULER_URL', 'SCHEDULER_TOKEN'),
    settlement: link(env, 'PLATFORM_SETTLEMENT_URL', 'LEDGER_TOKEN'),
    marketplace: link(env, 'PLATFORM_MARKETPLACE_URL', undefined),
    mcpServers: readMcpServers(env),
    models: readModels(env),
    compileConfidence: read.integer(env, 'DAEMON_COMPILE_CONFIDENCE_PERCENT', 60, { min: 0, max: 100 }) / 100,
    gateTimeoutMs: read.integer(env, 'DAEMON_GATE_TIMEOUT_SECONDS', 900, { min: 1, max: 30 * 86_400 }) * 1000,
    asyncStrategy,
    maxQueuedIntents: read.integer(env, 'DAEMON_MAX_QUEUED_INTENTS', 100, { min: 1, max: 10_000 }),
    modelTimeoutMs: read.integer(env, 'DAEMON_MODEL_TIMEOUT_MS', 120_000, { min: 100, max: 3_600_000 }),
    modelRetries: read.integer(env, 'DAEMON_MODEL_RETRIES', 2, { min: 0, max: 10 }),
    toolTimeoutMs: read.integer(env, 'DAEMON_TOOL_TIMEOUT_MS', 120_000, { min: 100, max: 3_600_000 }),
    ungatedTools: Object.freeze(
      read
        .string(env, 'DAEMON_UNGATED_TOOLS', '')
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    ),
    heartbeatMs: read.integer(env, 'DAEMON_HEARTBEAT_SECONDS', 15, { min: 1, max: 29 }) * 1000,
    subscriberBufferBytes: read.integer(env, 'DAEMON_SUBSCRIBER_BUFFER_BYTES', 1024 * 1024, { min: 65_536, max: 64 * 1024 * 1024 }),
    maxSubscribers: read.integer(env, 'DAEMON_MAX_SUBSCRIBERS', 2_000, { min: 1, max: 100_000 }),
  });
}
