import { ServiceError } from '@platform/kit/errors';

/**
 * Why the database refused a group's read or write, when it is for what one command carries rather than for the
 * ledger: SQLSTATE class 22 (data exception: text PostgreSQL cannot hold, a NUL or a lone surrogate) or class 23
 * (integrity). Nothing of the statement applied, so the writer applies the group's commands again one at a time, and
 * only the one at fault is refused (with what this returns); the writer does not step down. A seq or a batch number
 * taken already is not that: another writer wrote, and that steps this one down (undefined here).
 */
export function databaseRefusal(error: unknown): ServiceError | undefined {
  const failure = error as { code?: unknown; constraint?: unknown } | null;
  const code = typeof failure?.code === 'string' ? failure.code : '';
  if (code.startsWith('22')) return new ServiceError('invalid_request', 'the ledger cannot store this request as given: the database refused its text');
  if (!code.startsWith('23') || ledgerOrder.has(failure?.constraint as string)) return undefined;
  return new ServiceError('conflict', 'the database refused this request: it clashes with what the ledger holds', {
    details: { reason: 'refused_by_database' },
  });
}

/** The constraints that keep one writer's order: a clash on them means another writer, never a command's data. */
const ledgerOrder = new Set(['receipts_pkey', 'batches_pkey', 'batches_number_key', 'batches_event_id']);

/** A command that threw while it was applied (a bug, not a refusal): its group's staged rows may be half changed. */
export class ApplyFailure extends Error {
  constructor(cause: unknown) {
    super('a command failed while it was applied', { cause });
    this.name = 'ApplyFailure';
  }
}

/** What the command that threw while applied hears once it is applied alone and throws again. */
export const applyRefusal = () => new ServiceError('internal', 'the ledger failed to apply this request; nothing of it was written');
