import { type BucketRate, parseBucketRate } from './http/rate-limit.ts';
import { type LogLevel, logLevels } from './logger.ts';

/** A bad or missing setting; `main` prints its message as one line and exits. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Typed readers over an environment map. Each names the setting in its error. */
export const read = {
  /** A text setting; empty counts as unset, like every other reader. */
  string(env: Env, name: string, fallback: string): string {
    return env[name] || fallback;
  },
  optionalString(env: Env, name: string): string | undefined {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  },
  integer(env: Env, name: string, fallback: number, range: { min: number; max: number }): number {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || value < range.min || value > range.max) {
      throw new ConfigError(`${name} must be an integer from ${range.min} to ${range.max}, got "${raw}"`);
    }
    return value;
  },
  boolean(env: Env, name: string, fallback: boolean): boolean {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  },
  /**
   * A duration: `250ms`, `30s`, `5m`, `1h` (the spec's spelling), or a bare number of milliseconds; in ms.
   *
   * @example read.duration(env, 'ROUTER_WAKE_TIMEOUT', '30s', { min: 100, max: 600_000 })
   */
  duration(env: Env, name: string, fallback: string, range: { min: number; max: number }): number {
    const raw = env[name] || fallback;
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
    const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match?.[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
    const value = match ? Math.round(Number(match[1]) * unit) : Number.NaN;
    if (!(value >= range.min && value <= range.max))
      throw new ConfigError(`${name} must be a duration like 250ms, 30s or 5m, from ${range.min} ms to ${range.max} ms, got "${raw}"`);
    return value;
  },
  /** A URL setting; `echo: false` keeps the value out of the error (it may carry a password). */
  url(env: Env, name: string, fallback: string, protocols: readonly string[], echo = true): string {
    const raw = env[name] || fallback;
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(`${name} must be a URL${echo ? `, got "${raw}"` : ''}`);
    }
    if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
    return raw;
  },
  /** A token-bucket rate written `<per second>/<burst>`, e.g. `100/200`. */
  bucketRate(env: Env, name: string, fallback: BucketRate): BucketRate {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const rate = parseBucketRate(raw);
    if (!rate) throw new ConfigError(`${name} must be <per second>/<burst> such as 100/200, got "${raw}"`);
    return rate;
  },
};

export interface BaseConfig {
  readonly service: string;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly logLevel: LogLevel;
  /** PLATFORM_METRICS_TOKEN: the bearer of `GET /metrics`; empty, `/metrics` is not served (kit observability). */
  readonly metricsToken: string;
}

/**
 * The settings every service reads: HOST, PORT, DATA_DIR, DATABASE_URL, LOG_LEVEL, PLATFORM_METRICS_TOKEN.
 *
 * @example readBaseConfig(process.env, { service: 'scheduler', defaultPort: 9096 })
 */
export function readBaseConfig(env: Env, defaults: { service: string; defaultPort: number }): BaseConfig {
  const logLevel = read.string(env, 'LOG_LEVEL', 'info');
  if (!(logLevels as readonly string[]).includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${logLevel}"`);
  const databaseUrl = read.optionalString(env, 'DATABASE_URL');
  if (databaseUrl !== undefined) read.url(env, 'DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:'], false);
  return {
    service: defaults.service,
    host: read.string(env, 'HOST', '127.0.0.1'),
    port: read.integer(env, 'PORT', defaults.defaultPort, { min: 0, max: 65535 }),
    dataDir: read.string(env, 'DATA_DIR', `.data/${defaults.service}`),
    databaseUrl,
    logLevel: logLevel as LogLevel,
    metricsToken: read.string(env, 'PLATFORM_METRICS_TOKEN', ''),
  };
}
