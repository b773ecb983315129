import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config.ts';

/** A user id as the daemon (DAEMON_USER_ID), the router and the memory server's owner tokens know it. */
export const userIdPattern = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The user a daemon serves: the setting when it is set; otherwise (development) a UUID generated once into
 * `<dataDir>/user-id`. In the kit because `platform up` must know the user of the daemon it starts before that
 * daemon runs (to hand it that user's memory token), and both must read the same file the same way.
 *
 * @example const userId = userIdFromSettingOrFile(config.userId, config.dataDir)
 */
export function userIdFromSettingOrFile(configured: string, dataDir: string): string {
  if (configured !== '') return configured;
  const path = join(dataDir, 'user-id');
  try {
    const stored = readFileSync(path, 'utf8').trim();
    if (!userIdPattern.test(stored)) throw new ConfigError(`${path} does not hold a user id`);
    return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  // 'wx': a racing writer's id wins, and both read that one back.
  try {
    writeFileSync(path, `${randomUUID()}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readFileSync(path, 'utf8').trim();
}
