import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface ComposeService {
  image?: string;
  command?: string[];
  env_file?: string[];
  environment?: Record<string, string | number | boolean | null>;
  volumes?: string[];
  ports?: string[];
  read_only?: boolean;
  profiles?: string[];
  depends_on?: Record<string, { condition: string }>;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

/**
 * Compose's variable interpolation (https://docs.docker.com/reference/compose-file/interpolation/): `$$` is a dollar,
 * `${NAME}`, `${NAME:-default}` (unset or empty), `${NAME-default}` (unset), `${NAME:?message}` and `${NAME?message}`
 * (refused), applied to every string of the file before it is read, as `docker compose config` does.
 */
export function interpolate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])((?:[^}]|\}(?!\}))*?))?\}/g, (match, name, colon, kind, argument) => {
    if (match === '$$') return '$';
    const value = variables[name as string];
    const missing = value === undefined || (colon === ':' && value === '');
    if (kind === '?' && missing) throw new Error(`required variable ${name} is missing a value: ${argument}`);
    if (kind === '-' && missing) return argument as string;
    return value ?? '';
  });
}

/** Reads compose.yaml as `docker compose config` would see it with these variables (YAML merge keys included). */
export function readCompose(path: string, variables: Readonly<Record<string, string>>): ComposeFile {
  return parse(interpolate(readFileSync(path, 'utf8'), variables), { merge: true }) as ComposeFile;
}

/** An env file (`NAME=value` lines, `#` comments, blank lines), as compose's `env_file` reads one. */
export function readEnvFile(path: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const at = trimmed.indexOf('=');
    if (at <= 0) throw new Error(`${path}: not NAME=value: ${trimmed}`);
    settings[trimmed.slice(0, at)] = trimmed.slice(at + 1);
  }
  return settings;
}

/** A service's environment in the container: its env files in order, then `environment`, which wins. */
export function serviceEnvironment(service: ComposeService, envFile: (name: string) => string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const file of service.env_file ?? []) Object.assign(env, readEnvFile(envFile(file)));
  for (const [name, value] of Object.entries(service.environment ?? {})) env[name] = value === null ? '' : String(value);
  return env;
}
