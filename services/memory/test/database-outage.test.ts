import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { drillAnswer, driveThroughOutage } from '@platform/testkit/outage-drill';
import { type MemoryServer, startOnFreshDatabase } from './harness.ts';

const behind = await postgresBehindLink();

describe('the memory server while its database goes away', { skip: behind ? false : 'needs TEST_DATABASE_URL', timeout: 60_000 }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let server: MemoryServer;
  let dispose: () => Promise<void>;
  before(async () => {
    ({ server, dispose } = await startOnFreshDatabase(engine));
  });
  after(async () => {
    outage.end();
    await dispose?.();
    await close();
  });

  test('defers remember and search with 503 and Retry-After, then serves again, and keeps every memory it stored', async () => {
    const { acknowledged } = await driveThroughOutage({
      outage,
      call: async (n) => {
        // Writes and reads in turn: a search touches the database too.
        const answer =
          n % 2 === 0
            ? await server.call('remember', { scope: 'outage', memories: [{ content: `The user's outage fact number ${n}.` }] })
            : await server.call('search', { scope: 'outage', query: 'outage fact' });
        const id = n % 2 === 0 ? (answer.json?.data?.memories?.[0]?.id as string | undefined) : undefined;
        return { answer: drillAnswer(answer), ack: id };
      },
    });
    assert.ok(acknowledged.length > 0);
    for (const id of acknowledged) assert.equal((await server.ok('get', { id })).status, 'valid', `stored memory ${id}`);
  });
});
