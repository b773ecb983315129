import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { userIdFromSettingOrFile } from '@platform/kit/user-id-file';
import { daemonBearer, derivedSettings, derivedValue, rootSecret, serviceDataDir } from './platform-secrets.ts';

/**
 * `platform secret <SETTING>`: prints one secret `platform up` derives (from PLATFORM_SECRET or DATA_DIR/platform.secret),
 * so a person or a script can call a service the platform started, e.g.
 * `PLATFORM_DAEMON_TOKEN=$(npx platform secret PLATFORM_DAEMON_TOKEN) npx platform delegate "…"`.
 * PLATFORM_DAEMON_TOKEN is the bearer of the daemon `up` runs (its user's), never the router's root, which opens
 * every user's daemon (`--for router` writes the router's settings, that root among them). Only the value goes to
 * stdout; it never creates the root (a missing root means `up` never ran with this DATA_DIR), nor the daemon's user id.
 */
export function secretCommand(args: readonly string[], env: Readonly<Record<string, string | undefined>>): number {
  if (args[0] === '--for') return serviceSecrets(args.slice(1), env);
  const names = derivedSettings.map((entry) => entry.setting);
  const [setting, ...rest] = args;
  if (setting === undefined || rest.length > 0 || !names.includes(setting)) {
    console.error(`platform secret: name one derived setting: ${names.join(', ')} (or --for <service>)`);
    return 2;
  }
  return printed(env, (root) => `${setting === 'PLATFORM_DAEMON_TOKEN' ? upDaemonBearer(root, env) : derivedValue(setting, root)}\n`);
}

/**
 * `platform secret --for <service>`: `SETTING=value` lines of every derived setting that service receives, for a
 * deployment's env file (deploy/make-env.sh). The router's hold the roots it mints from (PLATFORM_DAEMON_TOKEN
 * among them): its file is for the router's machine only.
 */
function serviceSecrets(args: readonly string[], env: Readonly<Record<string, string | undefined>>): number {
  const services = [...new Set(derivedSettings.flatMap((entry) => entry.services))];
  const [service, ...rest] = args;
  if (service === undefined || rest.length > 0 || !services.includes(service)) {
    console.error(`platform secret --for: name one service: ${services.join(', ')}`);
    return 2;
  }
  return printed(env, (root) =>
    derivedSettings
      .filter((entry) => entry.services.includes(service))
      .map(({ setting }) => `${setting}=${derivedValue(setting, root)}\n`)
      .join(''),
  );
}

/** Writes what `text` makes of the existing root (never created here); exit 1 with one line when that fails. */
function printed(env: Readonly<Record<string, string | undefined>>, text: (root: Buffer) => string): number {
  try {
    process.stdout.write(text(rootSecret(env, { create: false }).key));
    return 0;
  } catch (error) {
    console.error(`platform secret: ${(error as Error).message}`);
    return 1;
  }
}

function upDaemonBearer(root: Buffer, env: Readonly<Record<string, string | undefined>>): string {
  const folder = serviceDataDir(env, 'daemon');
  if (!env.DAEMON_USER_ID && !existsSync(join(folder, 'user-id')))
    throw new Error(`the daemon has no user yet: ${join(folder, 'user-id')} does not exist (run platform up with this DATA_DIR first)`);
  return daemonBearer(root, env, userIdFromSettingOrFile(env.DAEMON_USER_ID ?? '', folder));
}
