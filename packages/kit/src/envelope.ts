import { type TSchema, Type } from 'typebox';
import type { ServiceError } from './errors.ts';

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
