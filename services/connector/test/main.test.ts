import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { start } from '../src/main.ts';

describe('start()', () => {
  test('in development, starts on PGlite with a vault key generated into DATA_DIR, serves /healthz and stops', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'connector-main-'));
    const service = await start({ PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', PLATFORM_CONNECTOR_TOKEN: 't' }, { handleSignals: false });
    try {
      assert.equal(service.name, 'connector');
      assert.match(service.dataLocation, /PGlite/);
      assert.ok(existsSync(path.join(dataDir, 'vault.key')));
      assert.equal((await fetch(`${service.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${service.url}/v1/connectors`)).status, 401);
      const catalogue = await fetch(`${service.url}/v1/connectors`, { headers: { authorization: 'Bearer t' } });
      assert.equal(((await catalogue.json()) as { data: { connectors: unknown[] } }).data.connectors.length, 1);
    } finally {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a malformed CONNECTOR_VAULT_KEYS stops the start with a message naming the setting', async () => {
    await assert.rejects(
      start({ PORT: '0', LOG_LEVEL: 'silent', CONNECTOR_VAULT_KEYS: 'k1:short' }, { handleSignals: false }),
      /^ConfigError: CONNECTOR_VAULT_KEYS entry 1/,
    );
  });
});
