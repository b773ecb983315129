import { ServiceError } from '../errors.ts';

/**
 * SQLSTATEs that say the database cannot take work now, whatever the statement: a retry once it is back can succeed.
 * - class 08, connection exception (not 08P01, a protocol violation: a client's bug);
 * - 57P01 admin shutdown (`pg_terminate_backend`, a fast shutdown, what a restart or failover does to a session),
 *   57P02 crash shutdown, 57P03 cannot connect now (starting up, shutting down, in recovery), 57P05 idle session timeout;
 * - class 53, insufficient resources: too many connections (53300), disk full, out of memory;
 * - 25006, read-only transaction: a write that reached a standby (a failover whose new primary is not promoted yet).
 */
const unavailableState = /^(08(?!P01)...|57P0[1235]|53...|25006)$/;

/** What node-postgres (and its pool) throws, without a code, when a connection is gone or cannot be made. */
const unavailableMessage =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|timeout expired$|Cannot use a pool after calling end)/;

/** Socket errors (Node's codes) on the way to the database: refused, reset, unreachable, timed out, a name not resolved. */
const unavailableSocket = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Seconds a caller is told to wait before retrying while the database is away (`Retry-After`): a restart takes a few. */
export const databaseRetryAfterSeconds = 2;

// The driver's failures that mean "unavailable", as the pool adapter saw them fail a statement or a connect.
const unavailableErrors = new WeakSet<object>();

/**
 * Called by the pool adapter (`postgres-pool.ts`) with every error a connect or a statement failed with: remembers
 * the ones that mean the database is unavailable rather than that the statement was wrong (a lost or refused
 * connection, a server shutting down or starting, no connection slot left, a standby refusing a write). Only the
 * driver's own errors are judged, so a socket error from some other call (a peer service's ECONNREFUSED) is never
 * taken for the database's. Kysely passes them on as they are; a failed transaction's rollback on a dead connection
 * throws node-postgres's "not queryable", and Node's connect to a name with several addresses an AggregateError.
 */
export function noteDatabaseFailure<E>(error: E): E {
  if (error !== null && typeof error === 'object' && unavailable(error)) unavailableErrors.add(error);
  return error;
}

/** True when `error` is a database failure that a retry once the database is back can cure (see `noteDatabaseFailure`). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return error !== null && typeof error === 'object' && unavailableErrors.has(error);
}

function unavailable(error: object): boolean {
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string' && (unavailableState.test(code) || unavailableSocket.has(code))) return true;
  if (typeof message === 'string' && unavailableMessage.test(message)) return true;
  return Array.isArray(errors) && errors.some((inner) => inner !== null && typeof inner === 'object' && unavailable(inner));
}

/**
 * The refusal for a request the database could not serve: 503 `unavailable`, retryable, with `retry_after` (which the
 * error handler also sends as `Retry-After`). Nothing was acknowledged; a write whose commit was under way when the
 * connection went may have landed, which is what idempotency keys are for.
 */
export function databaseUnavailable(cause: unknown): ServiceError {
  return new ServiceError('unavailable', 'the database cannot be reached; retry shortly', {
    cause,
    details: { reason: 'database_unavailable', retry_after: databaseRetryAfterSeconds },
  });
}
