import { type TSchema, Type } from 'typebox';
import type { ServiceError } from './errors.ts';

/** The success envelope: `{ok: true, data}`. */
export function ok<T>(data: T): { ok: true; data: T } {
  return { ok: true, data };
}

export interface FailureBody {
  ok: false;
  error: { code: string; message: string; retryable?: boolean; [extra: string]: unknown };
}

/** The failure envelope for a `ServiceError`; `retryable` is only present when true, as the spec marks it optional. */
export function failure(error: ServiceError): FailureBody {
  return {
    ok: false,
    error: { ...error.details, code: error.code, message: error.message, ...(error.retryable ? { retryable: true } : {}) },
  };
}

/** Response schema for a success envelope wrapping `data`, for route `response` declarations (fast serialisation). */
export function okSchema<T extends TSchema>(data: T) {
  return Type.Object({ ok: Type.Literal(true), data });
}
