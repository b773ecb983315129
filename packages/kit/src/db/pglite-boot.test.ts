import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createPGlite } from './pglite-boot.ts';

describe('createPGlite: new databases start from the initialised template', () => {
  const root = mkdtempSync(join(tmpdir(), 'pglite-boot-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  test('a new folder becomes a working database that keeps its data across a reopen', async () => {
    const dir = join(root, 'service');
    const first = await createPGlite(dir, {});
    await first.exec('create table notes (id int primary key, body text); insert into notes values (1, $$kept$$)');
    await first.close();
    assert.ok(existsSync(join(dir, 'PG_VERSION')));
    // Reopening must not copy the template over the existing data.
    const again = await createPGlite(dir, {});
    assert.deepEqual((await again.query('select body from notes')).rows, [{ body: 'kept' }]);
    await again.close();
  });

  test("the page cache is PostgreSQL's default, and 32 MB in a short-lived process (PLATFORM_PGLITE_SHORT_LIVED=1), on disk and in memory", async () => {
    const setting = process.env.PLATFORM_PGLITE_SHORT_LIVED;
    const cacheSize = async (shortLived: boolean, onDisk: boolean) => {
      process.env.PLATFORM_PGLITE_SHORT_LIVED = shortLived ? '1' : '0';
      const db = await createPGlite(onDisk ? join(root, `cache-${shortLived}`) : undefined, {});
      try {
        return (await db.query<{ size: string }>(`select current_setting('shared_buffers') as size`)).rows[0]?.size;
      } finally {
        await db.close();
      }
    };
    try {
      assert.equal(await cacheSize(false, true), '128MB');
      assert.equal(await cacheSize(true, true), '32MB');
      assert.equal(await cacheSize(false, false), '128MB');
      assert.equal(await cacheSize(true, false), '32MB');
    } finally {
      if (setting === undefined) delete process.env.PLATFORM_PGLITE_SHORT_LIVED;
      else process.env.PLATFORM_PGLITE_SHORT_LIVED = setting;
    }
  });

  test("a folder holding the service's other files (but no database) gets the template beside them", async () => {
    const dir = join(root, 'with-keys');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'vault.key'), 'secret');
    const db = await createPGlite(dir, {});
    assert.deepEqual((await db.query('select 1 as one')).rows, [{ one: 1 }]);
    await db.close();
    assert.equal(readFileSync(join(dir, 'vault.key'), 'utf8'), 'secret');
    assert.ok(existsSync(join(dir, 'PG_VERSION')));
  });

  test('in-memory databases are independent of each other and of the template', async () => {
    const a = await createPGlite(undefined, {});
    const b = await createPGlite(undefined, {});
    await a.exec('create table only_in_a (x int)');
    const tables = async (db: typeof a) =>
      (await db.query<{ name: string }>(`select table_name as name from information_schema.tables where table_schema = 'public'`)).rows.map((r) => r.name);
    assert.deepEqual(await tables(a), ['only_in_a']);
    assert.deepEqual(await tables(b), []);
    await Promise.all([a.close(), b.close()]);
    const c = await createPGlite(undefined, {});
    assert.deepEqual(await tables(c), [], 'the template did not change');
    await c.close();
  });

  test('the options still apply (type parsers)', async () => {
    const db = await createPGlite(undefined, { parsers: { 20: (value: string) => BigInt(value) } });
    assert.deepEqual((await db.query('select 9007199254740993::int8 as big')).rows, [{ big: 9007199254740993n }]);
    await db.close();
  });
});
