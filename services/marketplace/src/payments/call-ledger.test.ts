import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import { uuidv7 } from '@platform/kit/ids';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { serviceName } from '../app.ts';
import { migrations } from '../db/migrations.ts';
import type { MarketplaceSchema } from '../db/schema.ts';
import { marketplaceMetrics } from '../metrics.ts';
import { CallLedger } from './call-ledger.ts';
import { newInvocation } from './invocations.repository.ts';

const pending = (key: string, fields: { operation?: string } = {}) =>
  newInvocation({
    id: uuidv7(),
    listing_id: uuidv7(),
    operation: fields.operation ?? 'echo',
    caller_did: 'did:platform:caller:0123456789abcdef',
    idempotency_key: key,
    request_hash: 'h',
    rail: 'hold',
    cap_micros: 10_000n,
    request_digest: '0x00',
    started_at: new Date('2026-03-01T12:00:00.000Z'),
  });

for (const engine of testEngines()) {
  describe(`the call ledger's group commit on ${engine.name}`, () => {
    let database: Database<MarketplaceSchema>;
    let dispose: () => Promise<void>;
    let ledger: CallLedger;
    before(async () => {
      const fresh = await engine.fresh();
      dispose = fresh.dispose;
      database = await openDatabase<MarketplaceSchema>(fresh.options);
      await migrate(database, serviceName, migrations);
      ledger = new CallLedger(database.db, silentLogger, marketplaceMetrics(createServiceMetrics('marketplace'), database.db));
    });
    after(async () => {
      await database.close();
      await dispose();
    });

    test('of claims racing on one key exactly one is true, in one group and across groups', async () => {
      // The first claim starts a group; the next five queue behind it and are written together.
      const claims = await Promise.all(Array.from({ length: 6 }, () => ledger.claim(pending('racing'))));
      assert.equal(claims.filter(Boolean).length, 1);
      const rows = await database.db.selectFrom('invocations').select('id').where('idempotency_key', '=', 'racing').execute();
      assert.equal(rows.length, 1);
    });

    test('a write PostgreSQL refuses fails alone: the rest of its group is written', async () => {
      const opener = ledger.claim(pending('opener'));
      // Queued while the opener's group is written, so these three are one group; NUL is what jsonb refuses.
      const good = [ledger.claim(pending('good-1')), ledger.claim(pending('good-2'))];
      const bad = ledger.claim(pending('bad', { operation: 'echo\u0000' }));
      assert.equal(await opener, true);
      assert.deepEqual(await Promise.all(good), [true, true]);
      await assert.rejects(bad);
      const keys = (await database.db.selectFrom('invocations').select('idempotency_key').execute()).map((row) => row.idempotency_key);
      assert.ok(keys.includes('good-1') && keys.includes('good-2') && !keys.includes('bad'));
    });
  });
}
