import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '@platform/kit/config';
import { tracingSettingNames } from '@platform/kit/observability/tracing-settings';

export const repo = join(import.meta.dirname, '..', '..', '..');

/** Every service a deployment runs (cli/src/services.ts less development's identity provider and the daemons). */
export const deployedServices = ['scheduler', 'contracts', 'settlement', 'marketplace', 'gateway', 'memory', 'connector', 'router'] as const;

/**
 * What every service reads (kit `readBaseConfig` and its observability: the metrics bearer, OpenTelemetry's standard
 * settings; root README), beside its own.
 */
export const baseSettings = ['HOST', 'PORT', 'DATA_DIR', 'DATABASE_URL', 'LOG_LEVEL', 'NODE_ENV', 'PLATFORM_METRICS_TOKEN', ...tracingSettingNames];

/**
 * The settings a service documents: every `UPPER_CASE` name in its README (its settings table is the reference,
 * deploy/README.md says so), and for the router the daemons' settings it passes on (ROUTER_DAEMON_ENV's default).
 */
export async function documentedSettings(service: string): Promise<Set<string>> {
  const readme = readFileSync(join(repo, 'services', service, 'README.md'), 'utf8');
  const names = new Set([...readme.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)].map((match) => match[1] as string));
  for (const name of baseSettings) names.add(name);
  if (service === 'router') for (const name of (await import('../../../services/router/src/config.ts')).defaultDaemonEnv) names.add(name);
  return names;
}

/** The service's own settings parser (`loadConfig` in its config.ts): it throws on any setting it refuses, naming it. */
export async function loadServiceConfig(service: string, env: Env): Promise<{ production?: boolean } & Record<string, unknown>> {
  const module = (await import(`../../../services/${service}/src/config.ts`)) as {
    loadConfig(env: Env, defaults?: { daemonEntry: string; nodeFlags: readonly string[]; consoleDir: string }): Record<string, unknown>;
  };
  return module.loadConfig(env, { daemonEntry: '/opt/platform/services/daemon/dist/main.js', nodeFlags: [], consoleDir: '/opt/platform/web/console/dist' });
}

/** The port a service listens on in its container, from its settings (the router's two listeners from its addresses). */
export function listeningPorts(env: Readonly<Record<string, string>>): number[] {
  const fromAddress = (address: string | undefined) => (address === undefined ? undefined : Number(address.slice(address.lastIndexOf(':') + 1)));
  const ports = [fromAddress(env.ROUTER_ADDR) ?? Number(env.PORT ?? 8080), fromAddress(env.ROUTER_INTERNAL_ADDR)];
  return ports.filter((port): port is number => port !== undefined);
}
