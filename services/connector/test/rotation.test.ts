import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ServiceError } from '@platform/kit/errors';
import { testEngines } from '@platform/testkit/databases';
import { sql } from 'kysely';
import { type Connector, credentialFor, keyringOf, startConnector } from './harness.ts';

const connector = 'google-workspace';
const scopes = ['https://www.googleapis.com/auth/gmail.modify'];

for (const engine of testEngines()) {
  describe(`vault rotation on ${engine.name}`, () => {
    // One set of key bytes for the whole file: k1 is the key the service starts with, k2 and k3 come later.
    const keys = new Map<string, Buffer>();
    const k1 = keyringOf(['k1'], 'k1', keys);
    const k1k2 = keyringOf(['k1', 'k2'], 'k2', keys);
    let s: Connector;
    before(async () => {
      s = await startConnector(engine, { keyring: k1 });
    });
    after(() => s.close());

    async function clear() {
      await s.database.db.deleteFrom('connections').execute();
    }

    test('credentials round-trip through the table; the row holds no token bytes', async () => {
      await clear();
      const credential = credentialFor('roundtrip');
      await s.repository.save('alice', connector, scopes, credential);
      assert.deepEqual((await s.repository.open('alice', connector))?.credential, credential);
      const row = await s.database.db.selectFrom('connections').selectAll().executeTakeFirstOrThrow();
      const everything = Buffer.concat([row.iv, row.ciphertext, row.tag, Buffer.from(JSON.stringify({ ...row, iv: 0, ciphertext: 0, tag: 0 }))]);
      assert.ok(!everything.includes(Buffer.from(credential.accessToken)));
      assert.ok(!everything.includes(Buffer.from(credential.refreshToken)));
      assert.equal(row.key_id, 'k1');
    });

    test('a row moved to another owner or connector does not open', async () => {
      await clear();
      await s.repository.save('alice', connector, scopes, credentialFor('alice'));
      await s.repository.save('bob', connector, scopes, credentialFor('bob'));
      // Copy alice's sealed columns onto bob's row: the additional data names alice, so bob's read fails.
      await sql`update connections set iv = a.iv, ciphertext = a.ciphertext, tag = a.tag
        from (select iv, ciphertext, tag from connections where owner = 'alice') a where owner = 'bob'`.execute(s.database.db);
      await assert.rejects(s.repository.open('bob', connector), (error: unknown) => (error as ServiceError).details?.reason === 'vault_unseal_failed');
      assert.ok(await s.repository.open('alice', connector));
    });

    test('rotation: rows under the old and the new key both open; new writes use the new key; the re-seal moves the old ones', async () => {
      await clear();
      const oldCredentials = ['a', 'b', 'c'].map((owner) => [owner, credentialFor(owner)] as const);
      for (const [owner, credential] of oldCredentials) await s.repository.save(owner, connector, scopes, credential);
      const rotated = s.withKeys(k1k2, 2);
      const fresh = credentialFor('d');
      await rotated.repository.save('d', connector, scopes, fresh);
      assert.deepEqual(await rotated.repository.countByKey(), { k1: 3, k2: 1 });
      for (const [owner, credential] of oldCredentials) assert.deepEqual((await rotated.repository.open(owner, connector))?.credential, credential);
      // The old instance still opens the rows it sealed; the new row is under a key it does not have.
      await assert.rejects(s.repository.open('d', connector), (error: unknown) => (error as ServiceError).details?.reason === 'vault_key_missing');

      const report = await rotated.resealer.runOnce();
      assert.deepEqual(report, { moved: 3, raced: 0, failed: 0, batches: 2 });
      assert.deepEqual(await rotated.repository.countByKey(), { k2: 4 });
      for (const [owner, credential] of [...oldCredentials, ['d', fresh] as const]) {
        assert.deepEqual((await rotated.repository.open(owner, connector))?.credential, credential);
      }
      // Once nothing names k1 it can be removed; a second pass finds nothing.
      const k2Only = s.withKeys(keyringOf(['k2'], 'k2', keys), 2);
      assert.deepEqual(await k2Only.resealer.runOnce(), { moved: 0, raced: 0, failed: 0, batches: 1 });
      assert.deepEqual((await k2Only.repository.open('a', connector))?.credential, oldCredentials[0]?.[1]);
    });

    for (const [rows, batch, batches] of [
      [4, 2, 3],
      [5, 2, 3],
      [2, 2, 2],
      [1, 2, 1],
      [0, 2, 1],
      [3, 1, 4],
    ] as const) {
      test(`re-seal of ${rows} rows in batches of ${batch}: all moved in ${batches} reads`, async () => {
        await clear();
        for (let i = 0; i < rows; i++) await s.repository.save(`owner-${i}`, connector, scopes, credentialFor(`${i}`));
        const rotated = s.withKeys(k1k2, batch);
        assert.deepEqual(await rotated.resealer.runOnce(), { moved: rows, raced: 0, failed: 0, batches });
        assert.deepEqual(await rotated.repository.countByKey(), rows === 0 ? {} : { k2: rows });
      });
    }

    test('stop() lets the batch in flight finish and ends the pass there; the rest stays readable under the old key', async () => {
      await clear();
      for (let i = 0; i < 5; i++) await s.repository.save(`owner-${i}`, connector, scopes, credentialFor(`${i}`));
      const rotated = s.withKeys(k1k2, 2);
      const pass = rotated.resealer.runOnce();
      await rotated.resealer.stop();
      assert.deepEqual(await pass, { moved: 2, raced: 0, failed: 0, batches: 1 });
      assert.deepEqual(await rotated.repository.countByKey(), { k1: 3, k2: 2 });
      for (let i = 0; i < 5; i++) assert.ok(await rotated.repository.open(`owner-${i}`, connector));
    });

    test('a write that lands between the re-seal read and its update wins (even one sealed with the old key)', async () => {
      await clear();
      await s.repository.save('racer', connector, scopes, credentialFor('before'));
      const rotated = s.withKeys(k1k2, 10);
      const [row] = await rotated.repository.sealedUnder(['k1'], undefined, 10);
      assert.ok(row);
      // An instance not yet rotated saves a new credential: still key k1, but a new IV.
      const newer = credentialFor('newer');
      await s.repository.save('racer', connector, scopes, newer);
      const next = rotated.vault.seal(Buffer.from('stale'), { owner: 'racer', connector });
      assert.equal(await rotated.repository.replaceSealed(row.id, row.sealed, next), false);
      assert.deepEqual((await rotated.repository.open('racer', connector))?.credential, newer);
      // The next pass moves the newer value.
      assert.equal((await rotated.resealer.runOnce()).moved, 1);
      assert.deepEqual((await rotated.repository.open('racer', connector))?.credential, newer);
    });

    test('two re-seal passes at once on two instances: each row moves once, none is lost', async () => {
      await clear();
      const credentials = Array.from({ length: 6 }, (_, i) => credentialFor(`${i}`));
      for (const [i, credential] of credentials.entries()) await s.repository.save(`owner-${i}`, connector, scopes, credential);
      const [one, two] = [s.withKeys(k1k2, 2), s.withKeys(k1k2, 3)];
      const [a, b] = await Promise.all([one.resealer.runOnce(), two.resealer.runOnce()]);
      assert.equal(a.moved + b.moved, 6);
      assert.equal(a.failed + b.failed, 0);
      for (const [i, credential] of credentials.entries()) assert.deepEqual((await one.repository.open(`owner-${i}`, connector))?.credential, credential);
    });

    test('a removed key: its rows fail loudly on read, the re-seal leaves them be, other rows still open', async () => {
      await clear();
      await s.repository.save('orphan', connector, scopes, credentialFor('orphan'));
      const k2Only = s.withKeys(keyringOf(['k2'], 'k2', keys));
      await k2Only.repository.save('kept', connector, scopes, credentialFor('kept'));
      await assert.rejects(k2Only.repository.open('orphan', connector), (error: unknown) => {
        assert.ok(error instanceof ServiceError);
        assert.equal(error.code, 'unavailable');
        assert.equal(error.details?.reason, 'vault_key_missing');
        return true;
      });
      assert.deepEqual(await k2Only.resealer.runOnce(), { moved: 0, raced: 0, failed: 0, batches: 1 });
      assert.deepEqual(await k2Only.repository.countByKey(), { k1: 1, k2: 1 });
      assert.ok(await k2Only.repository.open('kept', connector));
    });

    test('a tampered row: reading fails, the re-seal counts it as failed and moves the rest', async () => {
      await clear();
      await s.repository.save('tampered', connector, scopes, credentialFor('t'));
      await s.repository.save('fine', connector, scopes, credentialFor('f'));
      await sql`update connections set ciphertext = ${Buffer.from('not what was sealed')} where owner = 'tampered'`.execute(s.database.db);
      await assert.rejects(s.repository.open('tampered', connector), (error: unknown) => (error as ServiceError).details?.reason === 'vault_unseal_failed');
      const rotated = s.withKeys(k1k2);
      assert.deepEqual(await rotated.resealer.runOnce(), { moved: 1, raced: 0, failed: 1, batches: 1 });
      assert.deepEqual(await rotated.repository.countByKey(), { k1: 1, k2: 1 });
    });
  });
}
