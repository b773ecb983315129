import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config.ts';

/**
 * A 32-byte secret (64 lowercase hex): the setting's value when it is set; otherwise, for development, one
 * generated once into `<dataDir>/<fileName>`, readable by the owner only, so what it protects (signatures,
 * sealed keys) survives restarts. Production services require the setting instead of calling this.
 *
 * @example const seed = secretFromSettingOrFile(config.sequencerKeyHex, config.dataDir, 'sequencer.key', 'SETTLEMENT_SEQUENCER_KEY')
 */
export function secretFromSettingOrFile(configured: string, dataDir: string, fileName: string, setting: string): { hex: string; source: string } {
  if (configured !== '') return { hex: configured, source: setting };
  const path = join(dataDir, fileName);
  try {
    const stored = readFileSync(path, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(stored)) throw new ConfigError(`${path} does not hold 64 hex characters (a 32-byte secret)`);
    return { hex: stored, source: path };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const hex = randomBytes(32).toString('hex');
  // 'wx': never overwrite a secret another process wrote first.
  writeFileSync(path, `${hex}\n`, { mode: 0o600, flag: 'wx' });
  return { hex, source: `${path} (generated)` };
}
