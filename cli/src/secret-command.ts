import { derivedSettings, derivedValue, rootSecret } from './platform-secrets.ts';

/**
 * `platform secret <SETTING>`: prints one secret `platform up` derives (from PLATFORM_SECRET or DATA_DIR/platform.secret),
 * so a person or a script can call a service the platform started, e.g.
 * `PLATFORM_DAEMON_TOKEN=$(npx platform secret PLATFORM_DAEMON_TOKEN) npx platform delegate "…"`.
 * Only the value goes to stdout; it never creates the root (a missing root means `up` never ran with this DATA_DIR).
 */
export function secretCommand(args: readonly string[], env: Readonly<Record<string, string | undefined>>): number {
  const names = derivedSettings.map((entry) => entry.setting);
  const [setting, ...rest] = args;
  if (setting === undefined || rest.length > 0 || !names.includes(setting)) {
    console.error(`platform secret: name one derived setting: ${names.join(', ')}`);
    return 2;
  }
  let root: Buffer;
  try {
    root = rootSecret(env, { create: false }).key;
  } catch (error) {
    console.error(`platform secret: ${(error as Error).message}`);
    return 1;
  }
  process.stdout.write(`${derivedValue(setting, root)}\n`);
  return 0;
}
