import { type BaseConfig, ConfigError, type Env, read, readBaseConfig } from '@platform/kit/config';

export interface SchedulerConfig extends BaseConfig {
  readonly transportToken: string;
  readonly agentAuthSecret: string;
  readonly dev: boolean;
  readonly wakeUrl: string;
  readonly wakeToken: string;
  readonly wakeTimeoutMs: number;
  /** Ask the wake receiver, when an alarm is made, whether its wakes would be taken (wake-check.ts). */
  readonly wakeCheck: boolean;
  readonly dispatchConcurrency: number;
  readonly leaseMs: number;
  readonly dispatcherEnabled: boolean;
}

/** Used when SCHEDULER_AGENT_AUTH_SECRET is empty outside production: tokens then prove nothing. */
export const developmentSecret = 'platform-scheduler-development-secret-not-for-production';

/**
 * The scheduler's settings, parsed once. With NODE_ENV=production the transport token and the principal-token
 * secret are required unless SCHEDULER_DEV=true; otherwise an empty secret falls back to the development secret
 * with a warning, as the spec describes.
 */
export function loadConfig(env: Env): SchedulerConfig {
  const base = readBaseConfig(env, { service: 'scheduler', defaultPort: 9096 });
  const dev = read.boolean(env, 'SCHEDULER_DEV', false);
  const production = read.string(env, 'NODE_ENV', '') === 'production';
  const transportToken = read.string(env, 'SCHEDULER_TOKEN', '');
  const agentAuthSecret = read.string(env, 'SCHEDULER_AGENT_AUTH_SECRET', '');
  if (production && !dev && transportToken === '') throw new ConfigError('SCHEDULER_TOKEN is required in production (or set SCHEDULER_DEV=true)');
  if (production && !dev && agentAuthSecret === '') throw new ConfigError('SCHEDULER_AGENT_AUTH_SECRET is required in production (or set SCHEDULER_DEV=true)');
  const wakeTimeoutMs = read.integer(env, 'SCHEDULER_WAKE_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 });
  const leaseMs = read.integer(env, 'SCHEDULER_LEASE_MS', 60_000, { min: 1_000, max: 3_600_000 });
  if (leaseMs <= wakeTimeoutMs) throw new ConfigError('SCHEDULER_LEASE_MS must be longer than SCHEDULER_WAKE_TIMEOUT_MS, or a slow wake would fire twice');
  return Object.freeze({
    ...base,
    transportToken,
    agentAuthSecret,
    dev,
    wakeUrl: read.url(env, 'SCHEDULER_WAKE_URL', 'http://127.0.0.1:8081/internal/wake', ['http:', 'https:']),
    wakeToken: read.string(env, 'SCHEDULER_WAKE_TOKEN', ''),
    wakeTimeoutMs,
    wakeCheck: read.boolean(env, 'SCHEDULER_WAKE_CHECK', false),
    dispatchConcurrency: read.integer(env, 'SCHEDULER_DISPATCH_CONCURRENCY', 512, { min: 1, max: 4096 }),
    leaseMs,
    dispatcherEnabled: read.boolean(env, 'SCHEDULER_DISPATCHER', true),
  });
}
