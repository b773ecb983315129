import { canonicalHash } from '@platform/kit/canonical-json';
import { ServiceError } from '@platform/kit/errors';
import type { Kysely } from 'kysely';
import type { MarketplaceSchema } from '../db/schema.ts';
import { conflict } from './errors.ts';

/** `Idempotency-Key` (header) or `idempotency_key` (body): 1–128 printable ASCII characters. */
export const idempotencyKeyPattern = /^[\x21-\x7e]{1,128}$/;

/** The key of a request: the header wins; both given and different is a mistake. */
export function idempotencyKeyOf(header: unknown, body: unknown): string | undefined {
  const fromHeader = typeof header === 'string' ? header : undefined;
  const fromBody = typeof body === 'string' ? body : undefined;
  if (fromHeader !== undefined && fromBody !== undefined && fromHeader !== fromBody)
    throw new ServiceError('invalid_request', 'the Idempotency-Key header and the body’s idempotency_key differ');
  const key = fromHeader ?? fromBody;
  if (key !== undefined && !idempotencyKeyPattern.test(key))
    throw new ServiceError('invalid_request', 'Idempotency-Key must be 1–128 printable ASCII characters');
  return key;
}

/**
 * Runs a write once per (scope, key): the first request claims the key, does the work and stores its answer; a
 * replay with the same request gets that answer; the same key with another request is 409
 * `idempotency_key_reused`; a replay while the first is still running is 409 `idempotency_in_progress`
 * (retryable). A failed first attempt frees the key. Without a key the work simply runs.
 */
export async function idempotent<T>(
  db: Kysely<MarketplaceSchema>,
  claim: { scope: string; key: string | undefined; request: unknown; now: Date },
  work: () => Promise<T>,
): Promise<T> {
  if (claim.key === undefined) return work();
  const requestHash = canonicalHash(claim.request);
  const inserted = await db
    .insertInto('idempotency')
    .values({ scope: claim.scope, key: claim.key, request_hash: requestHash, status: 'pending', response: null, created_at: claim.now })
    .onConflict((c) => c.columns(['scope', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  if (!inserted) {
    const existing = await db.selectFrom('idempotency').selectAll().where('scope', '=', claim.scope).where('key', '=', claim.key).executeTakeFirstOrThrow();
    if (existing.request_hash !== requestHash) throw conflict('this Idempotency-Key was used for another request', 'idempotency_key_reused');
    if (existing.status === 'pending')
      throw new ServiceError('conflict', 'a request with this Idempotency-Key is still being handled; retry shortly', {
        retryable: true,
        details: { reason: 'idempotency_in_progress' },
      });
    return existing.response as T;
  }
  try {
    const result = await work();
    await db
      .updateTable('idempotency')
      .set({ status: 'done', response: JSON.stringify(result) as never })
      .where('scope', '=', claim.scope)
      .where('key', '=', claim.key)
      .execute();
    return result;
  } catch (error) {
    await db.deleteFrom('idempotency').where('scope', '=', claim.scope).where('key', '=', claim.key).execute();
    throw error;
  }
}
