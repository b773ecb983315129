import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, type TestContext, test } from 'node:test';
import { notify } from '@platform/kit/db/channels';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import { createServiceApp } from '@platform/kit/http/create-app';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { ManualClock } from '@platform/testkit/manual-clock';
import { openSse, type SseClient } from '@platform/testkit/sse-client';
import { type ColumnType, type Kysely, sql } from 'kysely';
import pino from 'pino';
import { EventHub, type EventHubOptions } from './event-hub.ts';
import { type EventSource, eventsChannel, type StoredEvent } from './event-log.ts';
import { registerStreamRoute } from './stream-route.ts';

/** The hub's mechanics are tested over a plain table of events; the ledger's own source derives them from receipts. */
interface EventsTable {
  id: ColumnType<bigint, bigint, never>;
  type: ColumnType<string, string, never>;
  payload: ColumnType<unknown, string, never>;
  at: ColumnType<Date, Date | string, never>;
}
type Schema = { events: EventsTable };

function tableEvents(db: Kysely<Schema>): EventSource {
  return {
    readAfter: (afterId: bigint, limit: number): Promise<StoredEvent[]> =>
      db.selectFrom('events').select(['id', 'type', 'payload', 'at']).where('id', '>', afterId).orderBy('id').limit(limit).execute(),
    headId: async () => (await db.selectFrom('events').select('id').orderBy('id', 'desc').limit(1).executeTakeFirst())?.id ?? 0n,
  };
}

type Client = SseClient;
const connect = openSse;
const ids = (client: Client) => client.events.map((event) => BigInt(event.id ?? -1));
const lastId = (client: Client) => (client.events.length === 0 ? undefined : BigInt(client.events.at(-1)?.id ?? -1));
const range = (from: bigint, to: bigint) => Array.from({ length: Number(to - from + 1n) }, (_, index) => from + BigInt(index));

for (const engine of testEngines()) {
  describe(`event stream on ${engine.name}`, () => {
    let database: Database<Schema>;
    let dispose: () => Promise<void>;
    let nextId = 1n;

    before(async () => {
      const fresh = await engine.fresh();
      dispose = fresh.dispose;
      database = await openDatabase<Schema>(fresh.options);
      await database.db.schema
        .createTable('events')
        .addColumn('id', 'bigint', (c) => c.primaryKey())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('payload', 'jsonb', (c) => c.notNull())
        .addColumn('at', 'timestamptz', (c) => c.notNull())
        .execute();
    });
    after(async () => {
      await database.close();
      await dispose();
    });

    /** Appends events as the ledger does: one transaction, NOTIFY with the highest id on commit (unless told not to). */
    async function append(count: number, options: { notify?: boolean; padBytes?: number } = {}): Promise<bigint> {
      const rows = Array.from({ length: count }, () => {
        const id = nextId++;
        const payload = { n: Number(id), pad: 'x'.repeat(options.padBytes ?? 0) };
        return { id, type: id % 5n === 0n ? 'anchor' : 'transfer', payload: JSON.stringify(payload), at: new Date() };
      });
      const last = nextId - 1n;
      await database.db.transaction().execute(async (trx) => {
        await trx.insertInto('events').values(rows).execute();
        if (options.notify !== false) await sql`select ${notify(eventsChannel, String(last))}`.execute(trx);
      });
      return last;
    }

    /** A hub and an app listening on a free port; both are closed when the test ends. */
    async function serve(t: TestContext, options: Partial<EventHubOptions> = {}) {
      const logLines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
      const clock = new ManualClock();
      const hub = new EventHub({ source: tableEvents(database.db), clock, logger, ...options });
      await hub.start((channel, onPayload) => database.listen(channel, onPayload));
      const app = createServiceApp({ logger: silentLogger, bodyLimit: 1024, api: { title: 'test', version: '0.0.0' } });
      registerStreamRoute(app, { hub });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const clients: Client[] = [];
      t.after(async () => {
        for (const client of clients) client.close();
        await app.close();
      });
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/stream`;
      const open = async (headers: Record<string, string> = {}, openOptions: { read?: boolean; query?: string } = {}) => {
        const client = await connect(url + (openOptions.query ?? ''), headers, openOptions);
        clients.push(client);
        return client;
      };
      return { app, hub, clock, logLines, open };
    }

    test('delivers new events live, in order, to every subscriber, after a retry hint and no history', async (t) => {
      await append(2);
      const { open, hub } = await serve(t);
      const first = await open();
      const second = await open();
      assert.equal(first.status, 200);
      assert.equal(first.headers['content-type'], 'text/event-stream');
      assert.equal(first.headers['cache-control'], 'no-cache');
      assert.equal(first.headers['x-accel-buffering'], 'no');
      await eventually(() => first.other.length > 0 && hub.subscriberCount === 2, 'both subscribed');
      assert.deepEqual(first.other, ['retry: 2000']);
      const start = nextId;
      await append(3);
      const last = await append(4);
      await eventually(
        () => first.events.length === 7 && second.events.length === 7,
        () => `7 events each, got ${ids(first)} and ${ids(second)}`,
      );
      assert.deepEqual(ids(first), range(start, last));
      assert.deepEqual(ids(second), range(start, last));
      for (const event of first.events) {
        assert.equal(event.data.n, Number(event.id));
        assert.equal(event.event, BigInt(event.id ?? -1) % 5n === 0n ? 'anchor' : 'transfer');
      }
    });

    test('Last-Event-ID after a disconnect replays exactly the missed events, page by page, then continues live', async (t) => {
      const { open, hub } = await serve(t, { pageSize: 3 });
      const before = await open();
      await eventually(() => hub.subscriberCount === 1, 'subscribed');
      const seen = await append(2);
      await eventually(() => before.events.length === 2, 'first events');
      before.close();
      await eventually(() => hub.subscriberCount === 0, 'disconnect noticed');
      const missedTo = await append(8);
      await hub.notify();
      const again = await open({ 'last-event-id': String(seen) });
      await eventually(
        () => again.events.length === 8,
        () => `8 missed events, got ${ids(again)}`,
      );
      const liveTo = await append(2);
      await eventually(
        () => again.events.length === 10,
        () => `then live, got ${ids(again)}`,
      );
      assert.deepEqual(ids(again), range(seen + 1n, liveTo));
      assert.equal(missedTo + 2n, liveTo);
    });

    test('no gap and no duplicate when events are committed and fanned out while replay pages are read', async (t) => {
      let hub: EventHub | undefined;
      let injected = 0;
      // The first 8 replay pages (pages that start at or below the live position) are each held until the writer has
      // committed one more event and the hub has fanned it out: the live position moves on under the replay.
      const db = database.db.withPlugin({
        transformQuery: (args) => args.node,
        async transformResult(args) {
          const first = args.result.rows[0]?.id;
          if (hub && typeof first === 'bigint' && first <= hub.head && injected < 8) {
            injected++;
            await append(1);
            await hub.notify();
          }
          return args.result;
        },
      });
      const served = await serve(t, { source: tableEvents(db), pageSize: 2 });
      hub = served.hub;
      const from = nextId - 1n;
      await append(10);
      await hub.notify();
      const client = await served.open({ 'last-event-id': String(from) });
      await eventually(
        () => client.events.length === 18,
        () => `the backlog and what came during replay, got ${ids(client)}`,
      );
      const last = await append(2);
      await eventually(
        () => lastId(client) === last,
        () => `up to ${last}, got ${ids(client)}`,
      );
      assert.deepEqual(ids(client), range(from + 1n, last));
      assert.equal(injected, 8, 'the head moved under the replay');
    });

    test('a replay that reads past the live position is not repeated when the hub catches up', async (t) => {
      const { open, hub } = await serve(t, { pageSize: 3 });
      const head = await append(2);
      await hub.notify();
      // Committed but not yet announced: the replay's page reads beyond the hub's head.
      await append(5, { notify: false });
      const client = await open({ 'last-event-id': String(head - 2n) });
      await eventually(
        () => client.events.length === 3,
        () => `one page, got ${ids(client)}`,
      );
      const last = await append(1);
      await eventually(
        () => lastId(client) === last,
        () => `up to ${last}, got ${ids(client)}`,
      );
      assert.deepEqual(ids(client), range(head - 1n, last));
    });

    test('an id past the head: first caught up from the log, and beyond the log treated as the head', async (t) => {
      const { open, hub, logLines } = await serve(t);
      await append(1);
      await hub.notify();
      // Seen through another instance further ahead: this hub has not been told yet.
      const seen = await append(3, { notify: false });
      const ahead = await open({ 'last-event-id': String(seen) });
      const beyond = await open({}, { query: '?last_event_id=999999999' });
      // The header wins over the query: EventSource reconnects with its original URL and a newer header.
      const both = await open({ 'last-event-id': String(seen - 1n) }, { query: '?last_event_id=1' });
      await eventually(() => hub.subscriberCount === 3 && hub.head === seen, 'subscribed and caught up');
      const last = await append(1);
      // Said in full when it fails: what each client got, where the hub stands, and what it logged (a failed read is
      // logged and waits for the next wake, which a manual clock never sends). It failed twice in CI, `beyond` missing
      // this event: the hub caught up, then read this event too before `beyond` went live, and `beyond` took that head.
      await eventually(
        () => [ahead, beyond, both].every((client) => lastId(client) === last),
        () =>
          `live event ${last}: ahead got ${ids(ahead)}, beyond ${ids(beyond)}, both ${ids(both)}; hub head ${hub.head}, ` +
          `${hub.subscriberCount} subscribers; hub log: ${logLines.join('') || 'nothing'}`,
      );
      assert.deepEqual(ids(ahead), [last]);
      assert.deepEqual(ids(beyond), [last]);
      assert.deepEqual(ids(both), [seen, last]);
    });

    test('with nobody subscribed, a commit’s head id moves the live position without reading; a later subscriber starts there', async (t) => {
      let reads = 0;
      const counted = tableEvents(database.db);
      const source: EventSource = {
        ...counted,
        readAfter: (afterId, limit) => {
          reads += 1;
          return counted.readAfter(afterId, limit);
        },
      };
      const { open, hub } = await serve(t, { source });
      const readsAtStart = reads;
      const skipped = await append(4, { notify: false });
      await hub.notify(skipped);
      assert.equal(reads, readsAtStart, 'no read for nobody');
      assert.equal(hub.head, skipped);
      const client = await open();
      await eventually(() => hub.subscriberCount === 1, 'subscribed');
      const start = nextId;
      const last = await append(2, { notify: false });
      await hub.notify(last);
      await eventually(
        () => client.events.length === 2,
        () => `the two new events, got ${ids(client)}`,
      );
      assert.deepEqual(ids(client), range(start, last));
      assert.ok(reads > readsAtStart, 'read once someone listens');
    });

    test('a ledger in another schema of the same database neither moves the live position nor hides events', async (t) => {
      if (engine.name !== 'postgres') return t.skip('PGlite has one schema per database');
      const { open, hub } = await serve(t);
      // Its writer announces an id far past ours on the same channel name. Notifications reach listeners in
      // commit order, so had the hub heard it, it would have heard it before our own next one.
      const elsewhere = await engine.fresh();
      const other = await openDatabase<unknown>(elsewhere.options);
      t.after(async () => {
        await other.close();
        await elsewhere.dispose();
      });
      await sql`select ${notify(eventsChannel, '999999')}`.execute(other.db);
      const ours = await append(1);
      await eventually(
        () => hub.head === ours,
        () => `the live position at our ${ours}, at ${hub.head}`,
      );
      const client = await open();
      await eventually(() => hub.subscriberCount === 1, 'subscribed');
      const next = await append(1);
      await eventually(
        () => client.events.length === 1,
        () => `our next event, got ${ids(client)}`,
      );
      assert.deepEqual(ids(client), [next]);
    });

    test('a heartbeat comment every heartbeatMs of the injected clock', async (t) => {
      const { open, clock } = await serve(t, { heartbeatMs: 10_000 });
      const client = await open();
      await eventually(() => client.other.length === 1, 'retry hint');
      clock.advance(9_999);
      const last = await append(1);
      await eventually(() => client.events.length === 1, 'an event');
      assert.deepEqual(client.other, ['retry: 2000'], 'no heartbeat before its time');
      clock.advance(1);
      await eventually(() => client.other.length === 2, 'first heartbeat');
      clock.advance(10_000);
      await eventually(() => client.other.length === 3, 'second heartbeat');
      assert.deepEqual(client.other, ['retry: 2000', ': heartbeat', ': heartbeat']);
      assert.deepEqual(ids(client), [last]);
    });

    test('a subscriber that stops reading is dropped once over maxBufferedBytes; the others carry on', async (t) => {
      const { open, hub, logLines } = await serve(t, { maxBufferedBytes: 256 * 1024 });
      const normal = await open();
      const slow = await open({}, { read: false });
      await eventually(() => hub.subscriberCount === 2, 'both subscribed');
      const start = nextId;
      // Steps small next to the limit: the reading client drains each before the next, so only the stalled one builds up.
      // The kernel's socket buffers absorb some megabytes before any byte waits in this process.
      for (let step = 0; hub.subscriberCount === 2; step++) {
        assert.ok(step < 2_000, 'the slow subscriber was never dropped');
        const last = await append(4, { padBytes: 16 * 1024 });
        await eventually(() => lastId(normal) === last, 'the reading client keeps up');
      }
      const last = await append(1);
      await eventually(() => lastId(normal) === last, 'still live after the drop');
      assert.deepEqual(ids(normal), range(start, last));
      const drop = logLines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'slow stream subscriber dropped');
      assert.ok(drop, 'the drop is logged');
      assert.equal(drop.level, 30, 'at info');
      assert.ok(drop.bufferedBytes > 256 * 1024);
      slow.close();
    });

    test('beyond maxSubscribers: 503 unavailable, retryable; a freed slot admits again', async (t) => {
      const { open, hub } = await serve(t, { maxSubscribers: 2 });
      const first = await open();
      await open();
      const refused = await open();
      assert.equal(refused.status, 503);
      assert.deepEqual(JSON.parse(await refused.body), {
        ok: false,
        error: { code: 'unavailable', message: 'too many open event streams; retry later', retryable: true },
      });
      first.close();
      await eventually(() => hub.subscriberCount === 1, 'a slot freed');
      assert.equal((await open()).status, 200);
    });

    test('a malformed Last-Event-ID is a 400 invalid_request, header or query', async (t) => {
      const { open, hub } = await serve(t);
      for (const [headers, query] of [
        [{ 'last-event-id': 'abc' }, ''],
        [{ 'last-event-id': '-1' }, ''],
        [{ 'last-event-id': '9223372036854775808' }, ''],
        [{}, '?last_event_id=1.5'],
      ] as const) {
        const refused = await open(headers, { query });
        assert.equal(refused.status, 400, `${JSON.stringify(headers)}${query}`);
        const body = JSON.parse(await refused.body);
        assert.equal(body.ok, false);
        assert.equal(body.error.code, 'invalid_request');
      }
      assert.equal(hub.subscriberCount, 0);
    });

    test('closing the app ends open streams', async (t) => {
      const { app, open, hub } = await serve(t);
      const client = await open();
      await eventually(() => hub.subscriberCount === 1, 'subscribed');
      await app.close();
      await eventually(() => client.ended, 'stream ended');
      assert.equal(hub.subscriberCount, 0);
    });
  });
}
