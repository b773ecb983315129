import type { ColumnType, Kysely } from 'kysely';

/**
 * The ordered event log the ledger appends to in the same transaction as the movements it describes.
 * Rows never change once written, hence `never` as the update type. The payload is inserted as JSON text
 * (`JSON.stringify(payload)`): node-postgres would turn a JS array into a PostgreSQL array, not jsonb.
 */
export interface EventsTable {
  /** 1, 2, 3, … strictly increasing and gap-free, assigned by the single writer; int8, so a bigint when read. */
  id: ColumnType<bigint, bigint, never>;
  /** 'transfer' or 'anchor'. */
  type: ColumnType<string, string, never>;
  payload: ColumnType<unknown, string, never>;
  at: ColumnType<Date, Date | string, never>;
}

/** Any Kysely whose schema includes `events`: the service passes its own. */
export type EventLogDb = Kysely<{ events: EventsTable }>;

export interface StoredEvent {
  id: bigint;
  type: string;
  payload: unknown;
  at: Date;
}

/** The channel the writer NOTIFYs after commit; the payload is the highest id written, as decimal text. */
export const eventsChannel = 'settlement_events';

/**
 * Up to `limit` events with an id above `afterId`, oldest first. Because the single writer commits ids in order
 * and without gaps, reading "above the last id seen" never skips an event.
 *
 * @example const page = await readAfter(db, 41n, 500) // events 42, 43, … up to 541
 */
export async function readAfter(db: EventLogDb, afterId: bigint, limit: number): Promise<StoredEvent[]> {
  return db.selectFrom('events').select(['id', 'type', 'payload', 'at']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
}

/** The highest id written so far, or 0n for an empty log (one step back along the primary key). */
export async function headId(db: EventLogDb): Promise<bigint> {
  const row = await db.selectFrom('events').select('id').orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row?.id ?? 0n;
}
