import { systemClock } from '@platform/kit/clock';
import { notify } from '@platform/kit/db/channels';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import { sql } from 'kysely';
import pino from 'pino';
import { AlarmsRepository, alarmsChannel } from '../src/alarms/alarms.repository.ts';
import { migrations } from '../src/db/migrations.ts';
import type { SchedulerSchema } from '../src/db/schema.ts';
import { Dispatcher } from '../src/dispatch/dispatcher.ts';
import { httpWakeDelivery } from '../src/dispatch/wake-delivery.ts';
import type { Alarm } from './peers/alarm.ts';
import { measureRound } from './peers/round.ts';
import type { PeerOptions, PeerResult } from './peers/types.ts';
import { benchPipelining } from './wake-client.ts';

const logger = pino({ level: 'warn' });

/**
 * Our scheduler doing the peers' work: the alarms are inserted in bulk (as the peers' jobs are),
 * a NOTIFY wakes the sleeping dispatcher exactly as a create does, and it fires them through its
 * production wake delivery. `databaseUrl` undefined runs on embedded PGlite.
 */
export async function runScheduler(opts: Omit<PeerOptions, 'databaseUrl'> & { databaseUrl: string | undefined; instances?: number }): Promise<PeerResult> {
  const engine = opts.databaseUrl ? 'PostgreSQL' : 'PGlite';
  const databases: Database<SchedulerSchema>[] = [];
  const dispatchers: Dispatcher[] = [];
  const open = () => openDatabase<SchedulerSchema>({ url: opts.databaseUrl, logger, poolSize: 8 });
  const first = await open();
  databases.push(first);
  await migrate(first, 'scheduler', migrations);
  const instances = opts.databaseUrl ? (opts.instances ?? 1) : 1;
  for (let i = 0; i < instances; i++) {
    const database = i === 0 ? first : await open();
    if (i > 0) databases.push(database);
    const dispatcher = new Dispatcher({
      repository: new AlarmsRepository(database.db, systemClock),
      deliver: httpWakeDelivery({ url: opts.sinkUrl, token: opts.sinkToken, timeoutMs: 10_000, connections: 512, pipelining: benchPipelining }),
      clock: systemClock,
      logger,
      onAlarmCreated: (hint) => database.listen(alarmsChannel, hint),
      concurrency: 512,
      leaseMs: 60_000,
      maxIdleMs: 60_000,
    });
    await dispatcher.start();
    dispatchers.push(dispatcher);
  }
  try {
    const name = `scheduler ${engine}${instances > 1 ? ` x${instances}` : ''}`;
    return await measureRound(name, { ...opts, databaseUrl: opts.databaseUrl ?? '' }, (alarms) => insertAlarms(first, alarms));
  } finally {
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
    for (const database of databases) await database.close();
  }
}

async function insertAlarms(database: Database<SchedulerSchema>, alarms: Alarm[]): Promise<void> {
  const chunk = 1000;
  for (let start = 0; start < alarms.length; start += chunk) {
    const rows = alarms.slice(start, start + chunk);
    const due = rows.map((alarm) => new Date(alarm.scheduled_for).toISOString());
    await sql`
      insert into alarms (id, owner_did, owner_user_id, label, kind, cron_expr, timezone, next_fire_at, occurrence_at, conversation_id,
        wake_message, payload, status, idempotency_key, request_hash, max_failures, failure_count, attempt, last_error, created_at)
      select id, 'did:platform:' || user_id || ':0123456789abcdef', user_id, label, 'once', '', 'UTC', due, due, conversation_id,
        wake_message, payload, 'active', '', '', 5, 0, 1, '', now()
      from unnest(${rows.map((alarm) => alarm.alarm_id)}::uuid[], ${rows.map((alarm) => alarm.user_id)}::text[], ${rows.map((alarm) => alarm.label)}::text[],
        ${due}::timestamptz[], ${rows.map((alarm) => alarm.conversation_id)}::text[], ${rows.map((alarm) => alarm.wake_message)}::text[],
        ${rows.map((alarm) => JSON.stringify(alarm.payload))}::jsonb[]) as t(id, user_id, label, due, conversation_id, wake_message, payload)`.execute(
      database.db,
    );
  }
  const earliest = alarms.reduce((min, alarm) => Math.min(min, alarm.scheduled_for), Number.POSITIVE_INFINITY);
  await sql`select ${notify(alarmsChannel, new Date(earliest).toISOString())}`.execute(database.db);
}
