import { type Target, UsageError } from './command-output.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/** What a command runs with: the environment, and the service it talks to once it knows (failures name it). */
export interface CommandContext {
  env: Env;
  target?: Target;
}

/** The same settings the daemon reads for these services, so one exported environment serves both. */
const services = {
  scheduler: { urlSetting: 'PLATFORM_SCHEDULER_URL', defaultUrl: 'http://127.0.0.1:9096', tokenSetting: 'SCHEDULER_TOKEN' },
  settlement: { urlSetting: 'PLATFORM_SETTLEMENT_URL', defaultUrl: 'http://127.0.0.1:9097', tokenSetting: 'LEDGER_TOKEN' },
  // The marketplace has no transport bearer: callers identify by the DID handshake alone.
  marketplace: { urlSetting: 'PLATFORM_MARKETPLACE_URL', defaultUrl: 'http://127.0.0.1:9098', tokenSetting: undefined },
  // The person's agent, as `platform delegate` reaches it (the router's URL with `platform token`, or the daemon's own).
  daemon: { urlSetting: 'DAEMON_URL', defaultUrl: 'http://127.0.0.1:8080', tokenSetting: 'PLATFORM_DAEMON_TOKEN' },
} as const;

export type ServiceName = keyof typeof services;

/**
 * The service's address (`--url`, else its setting, else the platform's default port) and transport bearer; also
 * recorded on the context, so a failure names the service and where it was asked.
 */
export function useService(context: CommandContext, name: ServiceName, urlFlag: string | undefined): { url: string; token: string | undefined } {
  const settings = services[name];
  const url = urlFlag || context.env[settings.urlSetting] || settings.defaultUrl;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    parsed = new URL('invalid:');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`${urlFlag ? '--url' : settings.urlSetting} must be an http(s) URL, got "${url}"`);
  context.target = { service: name, url, ...(settings.tokenSetting ? { tokenSetting: settings.tokenSetting } : {}) };
  const token = settings.tokenSetting ? context.env[settings.tokenSetting] || undefined : undefined;
  return { url, token };
}
