import { fileURLToPath } from 'node:url';
import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';
import { readModelChoice, readModelLabels } from '@platform/kit/model-labels';
import { maxCreditUnits, parseDecimal12 } from './metering/credit.ts';
import { isModelId, type ModelPolicySettings, type UpstreamModelNaming } from './models/model-policy.ts';

/** Everything the HTTP surface needs; `main.ts` adds the base settings (port, database) around it. */
export interface GatewaySettings {
  /** Bearer of the chat and embedding routes; empty opens them (development only). */
  readonly gatewayToken: string;
  /** Bearer of the operator routes under /v1/admin; empty turns them off (403). */
  readonly adminToken: string;
  /** The kill switch: every path answers 503 until restart. */
  readonly disabled: boolean;
  /** Base URL of the OpenAI-compatible upstream (…/v1); undefined answers chat and embedding calls with 503. */
  readonly upstreamUrl: string | undefined;
  readonly upstreamApiKey: string;
  readonly upstreamModelNaming: UpstreamModelNaming;
  /** No progress from the upstream for this long (no headers, no body byte, no stream chunk) ends the call. */
  readonly upstreamTimeoutMs: number;
  readonly upstreamMaxSockets: number;
  readonly models: ModelPolicySettings;
  readonly defaultDailyCapUnits: bigint;
  /** A gateway instance that has not renewed its budget leases for this long is gone; its slices go back. */
  readonly leaseTtlMs: number;
  /** How many calls like the current one a budget slice holds beyond that call. */
  readonly leaseSliceCalls: number;
  /** Reservations and bookings commit without waiting for the WAL flush (PostgreSQL; see the README for the trade). */
  readonly asyncCommit: boolean;
  /**
   * How long a whole answer's booking may wait for others to share its commit (0: none waits; 2 ms on PostgreSQL and
   * 10 ms on PGlite by default). The answer has left already, its cost held by the lease; grants and streams'
   * bookings, which a caller waits on, never wait.
   */
  readonly bookingLingerMs: number;
  /** Output cap reserved, and sent upstream as max_tokens, when a chat call names none. */
  readonly defaultMaxTokens: number;
  readonly maxBodyBytes: number;
  readonly maxResponseBytes: number;
  /** Calls being served at once (streams included); more get 503 `overloaded`. */
  readonly maxInFlight: number;
  /** How long a stream whose client left is still read to learn its usage. */
  readonly drainTimeoutMs: number;
  /** How many such reads may run at once; past it the reservation is charged at once. */
  readonly maxDrains: number;
}

export interface GatewayConfig extends BaseConfig, GatewaySettings {
  readonly rateCardDir: string;
}

export const defaultEmbeddingModel = 'accounts/fireworks/models/nomic-embed-text-v1.5';
export const defaultRateCardDir = fileURLToPath(new URL('../rate-cards/', import.meta.url));

function modelSettings(env: Env): ModelPolicySettings {
  const labels = readModelLabels(env);
  const embeddingModels = read
    .string(env, 'GATEWAY_EMBEDDING_MODELS', defaultEmbeddingModel)
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '' && id !== 'none');
  for (const id of embeddingModels)
    if (!isModelId(id)) throw new ConfigError(`GATEWAY_EMBEDDING_MODELS must list model ids accounts/<provider>/models/<model>, got "${id}"`);
  // A pin is a label (M2) or a full id, and must be one of its slot's whitelisted models.
  const planner = readModelChoice(env, 'PLATFORM_PLANNER_MODEL', labels, 'planner');
  const executor = readModelChoice(env, 'PLATFORM_EXECUTOR_MODEL', labels, 'executor');
  return Object.freeze({
    labels,
    pins: Object.freeze({ ...(planner ? { planner } : {}), ...(executor ? { executor } : {}) }),
    embeddingModels: Object.freeze(embeddingModels),
  });
}

function creditSetting(env: Env, name: string, fallback: string): bigint {
  const parsed = parseDecimal12(read.string(env, name, fallback), name, maxCreditUnits);
  if (!parsed.ok) throw new ConfigError(parsed.reason);
  return parsed.value;
}

function upstreamNaming(env: Env): UpstreamModelNaming {
  const value = read.string(env, 'GATEWAY_UPSTREAM_MODEL_ID', 'full');
  if (value !== 'full' && value !== 'short') throw new ConfigError(`GATEWAY_UPSTREAM_MODEL_ID must be full or short, got "${value}"`);
  return value;
}

/**
 * The gateway's settings, parsed once. With NODE_ENV=production the gateway bearer is required; elsewhere an empty
 * one leaves the routes open with a warning, as the scheduler's transport bearer does.
 */
export function loadConfig(env: Env): GatewayConfig {
  const base = readBaseConfig(env, { service: 'gateway', defaultPort: 9090 });
  const production = read.string(env, 'NODE_ENV', '') === 'production';
  const gatewayToken = read.string(env, 'PLATFORM_GATEWAY_TOKEN', '');
  if (production && gatewayToken === '') throw new ConfigError('PLATFORM_GATEWAY_TOKEN is required in production');
  const upstreamUrl = read.optionalString(env, 'GATEWAY_UPSTREAM_URL');
  if (upstreamUrl !== undefined) read.url(env, 'GATEWAY_UPSTREAM_URL', upstreamUrl, ['http:', 'https:'], false);
  return Object.freeze({
    ...base,
    gatewayToken,
    adminToken: read.string(env, 'GATEWAY_ADMIN_TOKEN', ''),
    disabled: read.boolean(env, 'PLATFORM_GATEWAY_DISABLED', false),
    upstreamUrl,
    upstreamApiKey: read.string(env, 'GATEWAY_UPSTREAM_API_KEY', ''),
    upstreamModelNaming: upstreamNaming(env),
    upstreamTimeoutMs: read.integer(env, 'GATEWAY_UPSTREAM_TIMEOUT_MS', 120_000, { min: 100, max: 3_600_000 }),
    upstreamMaxSockets: read.integer(env, 'GATEWAY_UPSTREAM_MAX_SOCKETS', 256, { min: 1, max: 10_000 }),
    models: modelSettings(env),
    defaultDailyCapUnits: creditSetting(env, 'GATEWAY_DAILY_CAP_CREDIT', '10'),
    asyncCommit: read.boolean(env, 'GATEWAY_ASYNC_COMMIT', false),
    // Longer on PGlite, whose every statement runs on the gateway's own thread: fewer, larger batches matter more there.
    bookingLingerMs: read.integer(env, 'GATEWAY_BOOKING_LINGER_MS', base.databaseUrl === undefined ? 10 : 2, { min: 0, max: 1_000 }),
    leaseTtlMs: read.integer(env, 'GATEWAY_LEASE_TTL_MS', 30_000, { min: 3_000, max: 3_600_000 }),
    leaseSliceCalls: read.integer(env, 'GATEWAY_LEASE_SLICE_CALLS', 8, { min: 0, max: 1_000 }),
    defaultMaxTokens: read.integer(env, 'GATEWAY_DEFAULT_MAX_TOKENS', 4096, { min: 1, max: 1_000_000 }),
    maxBodyBytes: read.integer(env, 'GATEWAY_MAX_BODY_BYTES', 4 * 1024 * 1024, { min: 1024, max: 64 * 1024 * 1024 }),
    maxResponseBytes: read.integer(env, 'GATEWAY_MAX_RESPONSE_BYTES', 16 * 1024 * 1024, { min: 1024, max: 256 * 1024 * 1024 }),
    maxInFlight: read.integer(env, 'GATEWAY_MAX_IN_FLIGHT', 2048, { min: 1, max: 100_000 }),
    drainTimeoutMs: read.integer(env, 'GATEWAY_DRAIN_TIMEOUT_MS', 60_000, { min: 0, max: 3_600_000 }),
    maxDrains: read.integer(env, 'GATEWAY_MAX_DRAINS', 64, { min: 0, max: 10_000 }),
    rateCardDir: read.string(env, 'GATEWAY_RATE_CARD_DIR', defaultRateCardDir),
  });
}
