import { type RawBuilder, sql } from 'kysely';

/** PostgreSQL's limit on a channel name (NAMEDATALEN - 1 bytes). */
const maxChannelBytes = 63;

/**
 * The name a channel has on the wire: `<schema>.<channel>`. NOTIFY channels belong to the whole database, while
 * services share a database one schema each (and tests one schema per case): under a bare name one schema's
 * writer would wake another schema's listeners with payloads that mean nothing there (a settlement hub once took
 * another ledger's event id as its live position and sent its own events to nobody). `Database.listen` listens
 * on this name; writers notify through `notify`, which names it the same way from the session's schema.
 */
export function scopedChannel(schema: string, channel: string): string {
  const scoped = `${schema}.${channel}`;
  if (Buffer.byteLength(scoped) > maxChannelBytes) {
    throw new Error(`the NOTIFY channel ${scoped} is longer than ${maxChannelBytes} bytes: use a shorter schema name`);
  }
  return scoped;
}

/**
 * `pg_notify` on this schema's `channel`, for a select list or a CTE. The schema is the session's
 * `current_schema()` (the service's schema, first on its search_path): the same one `Database.listen` scopes by.
 *
 * @example await sql`select ${notify(alarmsChannel, at.toISOString())}`.execute(db)
 */
export function notify(channel: string, payload: string): RawBuilder<unknown> {
  return sql`pg_notify(current_schema() || ${`.${channel}`}, ${payload})`;
}
