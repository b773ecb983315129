import { type ErrorCode, ServiceError } from '@platform/kit/errors';
import type { FailureEnvelope } from '@platform/kit/http/create-app';
import { Type } from 'typebox';

/**
 * The marketplace's error envelope is its spec's: `{error: <code>, message, detail}`, with eleven codes. Kit codes
 * the spec names otherwise are renamed here; the HTTP status stays the kit's (a 413 is still a 413). `detail`
 * carries the error's extra members and `retryable`; `ok: false` is there too, as in every platform service.
 */
// Every kit code has its spec code here, so a code added to the kit cannot reach a caller unrenamed (the type says so).
const specCode: Record<ErrorCode, MarketplaceErrorCode> = {
  invalid_request: 'invalid_request',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  not_found: 'not_found',
  conflict: 'conflict',
  busy: 'conflict',
  payment_required: 'payment_required',
  account_deleted: 'not_found',
  quote_expired: 'quote_expired',
  payload_too_large: 'invalid_request',
  unsupported_media_type: 'invalid_request',
  rate_limited: 'rate_limited',
  account_suspended: 'forbidden',
  internal: 'internal_error',
  not_implemented: 'service_unavailable',
  unavailable: 'service_unavailable',
  payment_unavailable: 'payment_unavailable',
};

export const marketplaceErrorCodes = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'payment_required',
  'payment_unavailable',
  'quote_expired',
  'service_unavailable',
  'rate_limited',
  'internal_error',
] as const;
export type MarketplaceErrorCode = (typeof marketplaceErrorCodes)[number];

export interface MarketplaceFailure {
  ok: false;
  error: MarketplaceErrorCode;
  message: string;
  detail: Record<string, unknown>;
}

export function renderFailure(error: ServiceError): MarketplaceFailure {
  return {
    ok: false,
    error: specCode[error.code],
    message: error.message,
    detail: { ...error.details, retryable: error.retryable },
  };
}

/** The response schema of `renderFailure`'s body; `detail` stays open, since each error carries its own members there. */
export const MarketplaceFailureSchema = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.Unsafe<MarketplaceErrorCode>({ type: 'string', enum: [...marketplaceErrorCodes], description: 'One of the spec’s eleven codes' }),
    message: Type.String({ description: 'What went wrong, for a person' }),
    detail: Type.Object(
      { retryable: Type.Boolean({ description: 'Whether the same request may succeed later' }) },
      { additionalProperties: true, description: 'The error’s own members (a reason, the payment terms, a quote id) and retryable' },
    ),
  },
  { description: 'The request failed: the marketplace’s `{error, message, detail}`' },
);

export const marketplaceFailureEnvelope: FailureEnvelope = { render: renderFailure, schema: MarketplaceFailureSchema };

/** A conflict with a machine-readable reason in `detail.reason`. */
export function conflict(message: string, reason: string, detail: Record<string, unknown> = {}): ServiceError {
  return new ServiceError('conflict', message, { details: { reason, ...detail } });
}
