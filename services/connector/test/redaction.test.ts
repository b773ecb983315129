import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import { type TestEngine, testEngines } from '@platform/testkit/databases';
import { ManualClock } from '@platform/testkit/manual-clock';
import { sql } from 'kysely';
import { buildApp, principalHeader } from '../src/app.ts';
import { ConnectionsRepository } from '../src/connections/connections.repository.ts';
import { Resealer } from '../src/connections/reseal.ts';
import { migrations } from '../src/db/migrations.ts';
import type { ConnectorSchema } from '../src/db/schema.ts';
import { Vault } from '../src/vault/vault.ts';
import { agentAuthSecret, capturingLogger, credentialFor, keyringOf, transportToken } from './harness.ts';

const engine = testEngines()[0] as TestEngine;

describe('secrets stay out of logs', () => {
  let database: Database<ConnectorSchema>;
  let dispose: () => Promise<void>;
  before(async () => {
    const fresh = await engine.fresh();
    database = await openDatabase<ConnectorSchema>(fresh.options);
    dispose = fresh.dispose;
    await migrate(database, 'connector', migrations);
  });
  after(async () => {
    await database.close();
    await dispose();
  });

  test('requests with the bearer and the principal token, and a tampered row in the re-seal, log no secret', async () => {
    const capture = capturingLogger();
    const clock = new ManualClock('2026-03-01T12:00:00Z');
    const keys = new Map<string, Buffer>();
    const vault = new Vault(keyringOf(['k1'], 'k1', keys));
    const app = buildApp({ db: database.db, ping: () => database.ping(), clock, logger: capture.logger, vault, transportToken, agentAuthSecret });
    const repository = new ConnectionsRepository(database.db, vault, clock);
    const credential = credentialFor('logged');
    await repository.save('owner-1', 'google-workspace', [], credential);
    await repository.save('owner-2', 'google-workspace', [], credentialFor('tampered'));
    await sql`update connections set tag = ${Buffer.alloc(16)} where owner = 'owner-2'`.execute(database.db);

    const principal = 'principal-token-that-must-not-be-logged';
    for (const url of ['/v1/connections', '/v1/connectors']) {
      await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${transportToken}`, [principalHeader]: principal } });
    }
    const rotated = new Vault(keyringOf(['k1', 'k2'], 'k2', keys));
    const report = await new Resealer({
      repository: new ConnectionsRepository(database.db, rotated, clock),
      vault: rotated,
      batchSize: 10,
      logger: capture.logger,
    }).runOnce();
    assert.equal(report.failed, 1);
    await app.close();

    const logged = capture.text();
    assert.match(logged, /vault re-seal could not open a row/);
    assert.match(logged, /invalid principal token/);
    for (const secret of [transportToken, principal, credential.accessToken, credential.refreshToken, keys.get('k1')?.toString('base64') ?? '']) {
      assert.ok(!logged.includes(secret), `log holds ${secret.slice(0, 8)}…`);
    }
  });
});
