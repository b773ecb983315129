import { type TSchema, Type } from 'typebox';
import { type ErrorCode, errorCatalogue, type ServiceError } from './errors.ts';

/** The success envelope: `{ok: true, data}`. */
export function ok<T>(data: T): { ok: true; data: T } {
  return { ok: true, data };
}

export interface FailureBody {
  ok: false;
  error: { code: string; message: string; retryable: boolean; [extra: string]: unknown };
}

/**
 * The failure envelope for a `ServiceError`. `retryable` is always sent, `false` included: settlement's spec lists it
 * as a member of every error, and the scheduler's, where it is optional, accepts it either way.
 *
 * @example failure(new ServiceError('not_found', 'no such alarm')) // { ok: false, error: { code: 'not_found', message: 'no such alarm', retryable: false } }
 */
export function failure(error: ServiceError): FailureBody {
  return { ok: false, error: { ...error.details, code: error.code, message: error.message, retryable: error.retryable } };
}

/** Response schema for a success envelope wrapping `data`, for route `response` declarations (fast serialisation). */
export function okSchema<T extends TSchema>(data: T) {
  return Type.Object({ ok: Type.Literal(true), data });
}

/**
 * Response schema of the failure envelope, declared on every route by `createServiceApp` for its 4xx and 5xx answers.
 * `error` stays open: some codes carry members of their own (`alarm_id` on the scheduler's 409, a `reason`, a field
 * name), and a closed schema would have the serialiser drop them.
 */
export const FailureSchema = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.Object(
      {
        code: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(errorCatalogue), description: 'From the closed catalogue' }),
        message: Type.String({ description: 'What went wrong, for a person; never a stack trace or SQL' }),
        retryable: Type.Boolean({ description: 'Whether the same request may succeed later' }),
      },
      { additionalProperties: true, description: 'Codes may add members of their own (a conflicting id, a reason)' },
    ),
  },
  { description: 'The request failed: `{ok: false, error: {code, message, retryable, ...}}`' },
);
