import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';

export interface EmbeddingSettings {
  /** Base URL of an OpenAI-compatible API (`…/v1`); the gateway's `/v1` or any provider's. */
  readonly url: string;
  readonly apiKey: string;
  readonly model: string;
  readonly dimensions: number;
  readonly timeoutMs: number;
}

export interface MemoryConfig extends BaseConfig {
  /** Bearer every route but health needs; empty opens the server (loopback or development only). */
  readonly token: string;
  /** PostgreSQL text search configuration used for stems and stop words (`english`, `simple`, `german`, …). */
  readonly textSearchConfig: string;
  /** Undefined: keyword retrieval only. */
  readonly embeddings: EmbeddingSettings | undefined;
  /** Days after which the recency boost of a memory has halved. */
  readonly recencyHalfLifeDays: number;
}

const configName = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The memory server's settings, parsed once. With NODE_ENV=production the bearer is required: the server holds
 * everything an agent knows about its user.
 */
export function loadConfig(env: Env): MemoryConfig {
  const base = readBaseConfig(env, { service: 'memory', defaultPort: 4242 });
  const token = read.string(env, 'MEMORY_MCP_TOKEN', '');
  if (read.string(env, 'NODE_ENV', '') === 'production' && token === '') throw new ConfigError('MEMORY_MCP_TOKEN is required in production');
  const textSearchConfig = read.string(env, 'MEMORY_TEXT_SEARCH_CONFIG', 'english');
  if (!configName.test(textSearchConfig)) throw new ConfigError(`MEMORY_TEXT_SEARCH_CONFIG must name a text search configuration, got "${textSearchConfig}"`);
  return Object.freeze({
    ...base,
    token,
    textSearchConfig,
    embeddings: readEmbeddings(env),
    recencyHalfLifeDays: read.integer(env, 'MEMORY_RECENCY_HALF_LIFE_DAYS', 30, { min: 1, max: 36_500 }),
  });
}

function readEmbeddings(env: Env): EmbeddingSettings | undefined {
  const url = read.optionalString(env, 'MEMORY_EMBEDDINGS_URL');
  if (url === undefined) return undefined;
  read.url(env, 'MEMORY_EMBEDDINGS_URL', url, ['http:', 'https:'], false);
  const model = read.optionalString(env, 'MEMORY_EMBEDDINGS_MODEL');
  if (model === undefined) throw new ConfigError('MEMORY_EMBEDDINGS_MODEL is required when MEMORY_EMBEDDINGS_URL is set');
  if (env.MEMORY_EMBEDDINGS_DIMENSIONS === undefined || env.MEMORY_EMBEDDINGS_DIMENSIONS === '')
    throw new ConfigError('MEMORY_EMBEDDINGS_DIMENSIONS is required when MEMORY_EMBEDDINGS_URL is set (the length of the model’s vectors)');
  return Object.freeze({
    url: url.replace(/\/+$/, ''),
    apiKey: read.string(env, 'MEMORY_EMBEDDINGS_API_KEY', ''),
    model,
    dimensions: read.integer(env, 'MEMORY_EMBEDDINGS_DIMENSIONS', 0, { min: 1, max: 4000 }),
    timeoutMs: read.integer(env, 'MEMORY_EMBEDDINGS_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
  });
}
