import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { openDatabase } from '@platform/kit/db/open-database';
import { silentLogger } from '@platform/testkit/databases';
import OpenAI from 'openai';
import type { GatewaySchema } from '../src/db/schema.ts';
import { start } from '../src/main.ts';
import { callerHeaders, gatewayToken, models, newActor, testEnv } from './harness.ts';
import { startUpstream } from './upstream.ts';

describe('start()', () => {
  test('starts from an environment, publishes the rate cards, serves a metered call and stops with its booking written', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-main-'));
    const upstream = await startUpstream();
    const service = await start(
      { ...testEnv, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', GATEWAY_UPSTREAM_URL: upstream.url },
      { handleSignals: false },
    );
    try {
      assert.equal(service.name, 'gateway');
      assert.match(service.dataLocation, /PGlite/);
      assert.equal((await fetch(`${service.url}/healthz`)).status, 200);
      const actor = newActor();
      const client = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: gatewayToken, defaultHeaders: callerHeaders(actor), maxRetries: 0 });
      const { response } = await client.chat.completions.create({ model: models.small, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      assert.equal(response.headers.get('x-platform-rate-table-version'), '1');
      // Stopped right after the answer, whose booking may still be committing: the stop waits for it. (stop() is
      // idempotent: the one in `finally` returns the same promise.)
      await service.stop();
      const database = await openDatabase<GatewaySchema>({ dataDir, schema: 'gateway', logger: silentLogger });
      try {
        const rows = await database.db.selectFrom('ledger').select(['actor', 'basis']).execute();
        assert.deepEqual(rows, [{ actor, basis: 'usage' }]);
      } finally {
        await database.close();
      }
    } finally {
      await service.stop();
      await upstream.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a malformed rate card stops the start with a message naming the file', async () => {
    const cards = mkdtempSync(path.join(os.tmpdir(), 'gateway-cards-'));
    writeFileSync(path.join(cards, 'v1.json'), '{"version": 1, "usd_per_credit": "0.01", "models": {"gpt-4o": {}}}');
    try {
      await assert.rejects(
        start({ ...testEnv, PORT: '0', LOG_LEVEL: 'silent', GATEWAY_RATE_CARD_DIR: cards }, { handleSignals: false }),
        /rate card v1.json: model "gpt-4o"/,
      );
    } finally {
      rmSync(cards, { recursive: true, force: true });
    }
  });
});
