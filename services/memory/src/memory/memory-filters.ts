import { type RawBuilder, sql } from 'kysely';
import type { MemoryKind } from '../db/schema.ts';
import { textArray } from './sql-fragments.ts';

/** What a recall or search may look at. Erased memories are never read. */
export interface MemoryFilters {
  /** From the verified bearer: nothing of another owner is ever read. */
  owner: string;
  scope: string;
  kinds?: readonly MemoryKind[] | undefined;
  /** Memories holding every one of these tags. */
  tags?: readonly string[] | undefined;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
  includeSuperseded: boolean;
  includeForgotten: boolean;
}

/** The filters as one SQL condition over the alias `m`. */
export function filterCondition(filters: MemoryFilters): RawBuilder<boolean> {
  const conditions: RawBuilder<unknown>[] = [sql`m.owner = ${filters.owner}`, sql`m.scope = ${filters.scope}`, sql`not m.erased`];
  if (!filters.includeSuperseded) conditions.push(sql`m.invalidated_at is null`);
  if (!filters.includeForgotten) conditions.push(sql`m.forgotten_at is null`);
  if (filters.kinds !== undefined && filters.kinds.length > 0) conditions.push(sql`m.kind = any(${textArray(filters.kinds)})`);
  if (filters.tags !== undefined && filters.tags.length > 0) conditions.push(sql`m.tags @> ${textArray(filters.tags)}`);
  if (filters.createdAfter !== undefined) conditions.push(sql`m.created_at >= ${filters.createdAfter}`);
  if (filters.createdBefore !== undefined) conditions.push(sql`m.created_at < ${filters.createdBefore}`);
  return sql<boolean>`(${sql.join(conditions, sql` and `)})`;
}
