import { type RawBuilder, sql } from 'kysely';

/**
 * What keyword search matches: the content's stems (weight A), then the tags' and key's (weight B; a key's
 * separators read as spaces, so `user.home_city` is matched by "home" and "city").
 */
export function searchVectorSql(config: string, content: RawBuilder<unknown>, tags: RawBuilder<unknown>, key: RawBuilder<unknown>): RawBuilder<unknown> {
  const describing = sql`array_to_string(${tags}, ' ') || ' ' || coalesce(regexp_replace(${key}, '[_.:/-]+', ' ', 'g'), '')`;
  return sql`setweight(to_tsvector(${config}::regconfig, ${content}), 'A') || setweight(to_tsvector(${config}::regconfig, ${describing}), 'B')`;
}

/** A text[] built from JSON, so both engines' drivers pass it the same way. */
export function textArray(values: readonly string[]) {
  return sql<string[]>`array(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;
}
