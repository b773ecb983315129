import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { ListingCache } from '../src/payments/listing-cache.ts';
import { type Marketplace, startMarketplace } from './harness.ts';
import { providerManifest, seedActiveListing } from './paid-fixtures.ts';

for (const engine of testEngines()) {
  describe(`the listing cache on ${engine.name}`, () => {
    let market: Marketplace;
    before(async () => {
      market = await startMarketplace(engine);
    });
    after(async () => market.close());

    // A hosted listing's calls moved to a new deployment while a call was reading the listing: that read must not
    // keep the row from before the change for the next second (a redeploy under load answered from the old one).
    test('a read in flight when the listing is forgotten is not kept', async () => {
      const db = market.database.db;
      const id = await seedActiveListing(db, providerManifest('http://127.0.0.1:9'));
      const cache = new ListingCache(db);
      const reading = cache.active(id);
      // The change lands after the read (one connection serves them in order), and is forgotten while the read is out.
      const change = db.updateTable('listings').set({ status: 'paused' }).where('id', '=', id).execute();
      cache.forget(id);
      assert.equal((await reading).status, 'active');
      await change;
      await assert.rejects(cache.active(id), (error: Error & { code?: string }) => error.code === 'unavailable');
    });
  });
}
