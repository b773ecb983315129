import { ConfigError } from '@platform/kit/config';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';

/** The vault's keys by id, and which one seals new writes. Every other key only decrypts (until removed). */
export interface Keyring {
  readonly currentId: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

export const vaultKeysSetting = 'CONNECTOR_VAULT_KEYS';
/** The id the generated development key is stored under; a production keyring may not reuse it by accident. */
export const developmentKeyId = 'dev';

const keyIdPattern = /^[A-Za-z0-9_-]{1,32}$/;
// Canonical base64 (standard or url alphabet) of exactly 32 bytes: 43 characters, then one optional '='.
const keyPattern = /^[A-Za-z0-9+/_-]{42}[AEIMQUYcgkosw048]=?$/;
const maxKeys = 16;

/**
 * Parses `CONNECTOR_VAULT_KEYS`: comma-separated `<id>:<base64 of 32 bytes>`, the current one marked with a
 * leading `*` (a single key needs no mark). Errors name the setting and the entry's position, and never echo
 * key material: a key that is one character off would otherwise end up in a log.
 *
 * @example parseVaultKeys('2025a:AAAA…=,*2026a:BBBB…=') // { currentId: '2026a', keys: Map(2) }
 */
export function parseVaultKeys(raw: string, setting = vaultKeysSetting): Keyring {
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.length > maxKeys) throw new ConfigError(`${setting} holds more than ${maxKeys} keys; remove the ones no row is sealed with`);
  const keys = new Map<string, Buffer>();
  const marked: string[] = [];
  entries.forEach((entry, index) => {
    const where = `${setting} entry ${index + 1}`;
    const current = entry.startsWith('*');
    const body = current ? entry.slice(1) : entry;
    const colon = body.indexOf(':');
    if (colon < 0) throw new ConfigError(`${where} must be [*]<id>:<base64 of 32 bytes>`);
    const id = body.slice(0, colon);
    const material = body.slice(colon + 1);
    if (!keyIdPattern.test(id)) throw new ConfigError(`${where} has a bad key id: 1 to 32 of A-Z a-z 0-9 _ -`);
    if (!keyPattern.test(material)) throw new ConfigError(`${where} (key id "${id}") is not the base64 of exactly 32 bytes`);
    if (keys.has(id)) throw new ConfigError(`${where} repeats key id "${id}"`);
    keys.set(id, Buffer.from(material.replaceAll('-', '+').replaceAll('_', '/'), 'base64'));
    if (current) marked.push(id);
  });
  if (marked.length > 1) throw new ConfigError(`${setting} marks ${marked.length} keys current with "*"; mark exactly one`);
  const currentId = marked[0] ?? (keys.size === 1 ? [...keys.keys()][0] : undefined);
  if (currentId === undefined) throw new ConfigError(`${setting} holds several keys and none is marked current with "*"`);
  return Object.freeze({ currentId, keys });
}

/**
 * The keyring to run with: the setting when given; otherwise, in development, one key generated once into
 * `<dataDir>/vault.key` (so sealed rows survive restarts) under the id `dev`. Production without keys is refused
 * by `loadConfig` before this runs.
 */
export function resolveKeyring(configured: string, dataDir: string): { keyring: Keyring; source: string } {
  if (configured !== '') return { keyring: parseVaultKeys(configured), source: vaultKeysSetting };
  const { hex, source } = secretFromSettingOrFile('', dataDir, 'vault.key', vaultKeysSetting);
  return { keyring: Object.freeze({ currentId: developmentKeyId, keys: new Map([[developmentKeyId, Buffer.from(hex, 'hex')]]) }), source };
}
