import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '@platform/kit/config';

/**
 * The sequencer key's seed: SETTLEMENT_SEQUENCER_KEY when set; otherwise (development) a seed generated once
 * into DATA_DIR/sequencer.key, readable by the owner only, so receipts stay verifiable across restarts.
 */
export function sequencerSeed(configured: string, dataDir: string): { seedHex: string; source: string } {
  if (configured !== '') return { seedHex: configured, source: 'SETTLEMENT_SEQUENCER_KEY' };
  const path = join(dataDir, 'sequencer.key');
  try {
    const stored = readFileSync(path, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(stored)) throw new ConfigError(`${path} does not hold a 64-hex sequencer seed`);
    return { seedHex: stored, source: path };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const seedHex = randomBytes(32).toString('hex');
  // 'wx': never overwrite a key another process wrote first.
  writeFileSync(path, `${seedHex}\n`, { mode: 0o600, flag: 'wx' });
  return { seedHex, source: `${path} (generated)` };
}
