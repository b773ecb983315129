/**
 * The one closed catalogue of error codes a service may answer with, and the HTTP status each maps to.
 * Handlers throw `ServiceError`; the error handler in `http/error-handler.ts` renders the envelope.
 *
 * @example throw new ServiceError('not_found', 'alarm not found')
 */
export const errorCatalogue = {
  invalid_request: { status: 400, retryable: false, meaning: 'Malformed body or query, missing or invalid field' },
  unauthorized: { status: 401, retryable: false, meaning: 'Missing or invalid bearer, principal token, nonce, signature or key' },
  forbidden: { status: 403, retryable: false, meaning: 'Authenticated but not allowed' },
  not_found: { status: 404, retryable: false, meaning: 'Unknown route, or a resource unknown or not owned by the caller' },
  conflict: { status: 409, retryable: false, meaning: 'Idempotency key reused with different parameters, or a state clash' },
  busy: { status: 409, retryable: true, meaning: 'A single-flight resource is in use (the daemon walks one intent at a time); retry when it is free' },
  payment_required: { status: 402, retryable: false, meaning: 'The call must be paid: the answer carries the terms (the marketplace)' },
  account_deleted: { status: 410, retryable: false, meaning: 'The account was deleted (the router, for a deleted user)' },
  quote_expired: { status: 410, retryable: false, meaning: 'The quote is past its expires_at (the marketplace); ask for a new one' },
  payload_too_large: { status: 413, retryable: false, meaning: 'Request body over the service limit' },
  unsupported_media_type: { status: 415, retryable: false, meaning: 'Request body is not JSON' },
  rate_limited: { status: 429, retryable: true, meaning: 'Too many requests; retry later' },
  account_suspended: { status: 451, retryable: false, meaning: 'The account is suspended (the router, for a suspended user)' },
  internal: { status: 500, retryable: true, meaning: 'Database error or unexpected failure' },
  not_implemented: { status: 501, retryable: false, meaning: 'A route the spec names whose feature is not built yet (the marketplace’s hosted mode)' },
  unavailable: { status: 503, retryable: true, meaning: 'A dependency (the database, the sequencer) is unavailable' },
  payment_unavailable: {
    status: 503,
    retryable: true,
    meaning: 'The payment rail (settlement) cannot be reached or refused to move funds for a reason of its own',
  },
} as const satisfies Record<string, { status: number; retryable: boolean; meaning: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** The single error type handlers throw; `message` is shown to the caller, so it never carries secrets or SQL. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  /** Extra members merged into the error object of the envelope (e.g. a field name). */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown>; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.retryable = options?.retryable ?? errorCatalogue[code].retryable;
    this.details = options?.details;
  }
}

/** Shorthand for the most common caller mistake. */
export function invalidRequest(message: string, details?: Record<string, unknown>): ServiceError {
  return new ServiceError('invalid_request', message, details ? { details } : undefined);
}
