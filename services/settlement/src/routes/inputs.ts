import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import { canonicalHash } from '@platform/kit/canonical-json';
import { invalidRequest } from '@platform/kit/errors';
import { parseAmount } from '@platform/kit/money';
import { Type } from 'typebox';
import { type IdempotencyClaim, storable } from '../ledger/commands.ts';

/** Request parsing shared by the routes: one message per mistake, naming the field. */

export const limits = {
  pageDefault: 50,
  pageMax: 200,
  idempotencyKeyChars: 128,
  didChars: 256,
  bodyBytes: 16 * 1024,
  /** Items in one batch request (`POST /v1/hold/batch`, `POST /v1/hold/batch/settle`). */
  batchItems: 64,
  /** A batch's body: each item as large as its single route's body may be. */
  batchBodyBytes: 64 * 16 * 1024,
} as const;

export const DidText = Type.String({ maxLength: limits.didChars, description: 'Agent DID, did:platform:<label>:<16 hex>' });
export const AmountText = Type.String({ maxLength: 40, description: 'Decimal string, at most 6 places, above zero' });
export const IdempotencyKey = Type.String({ minLength: 1, maxLength: limits.idempotencyKeyChars, description: 'Replays return the original result' });
export const Ref = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', description: '32-byte binding digest, 0x + 64 hex' });

/** Free text a caller gives, refused with 400 naming the field before it reaches a query or the writer's queue. */
export function textInput(value: string, field: string): string {
  if (!storable(value)) throw invalidRequest(`${field} must not hold a NUL character or a lone surrogate`, { field });
  return value;
}

/** A DID in the ledger's one spelling, or 400 naming the field. */
export function didInput(value: string, field: string): string {
  const parsed = parseDid(textInput(value, field));
  if (!parsed) throw invalidRequest(`${field} must be a DID of the form did:platform:<label>:<16 hex characters>`, { field });
  return canonicalDid(parsed);
}

export function amountInput(value: unknown, field = 'amount'): bigint {
  const parsed = parseAmount(value);
  if (!parsed.ok) throw invalidRequest(`${field}: ${parsed.reason}`, { field });
  return parsed.micros;
}

/** A positive integer from text (query strings and path segments), or 400. */
export function integerInput(raw: string | undefined, field: string, range: { min: number; max: number }): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= range.min && value <= range.max)) throw invalidRequest(`${field} must be an integer from ${range.min} to ${range.max}`, { field });
  return value;
}

export function pageLimit(raw: string | undefined): number {
  return integerInput(raw, 'limit', { min: 1, max: limits.pageMax }) ?? limits.pageDefault;
}

/** The key and a hash of the operation with its normalised parameters: the same key with other terms is a 409. */
export function idempotencyClaim(key: string | undefined, operation: string, parameters: Record<string, unknown>): IdempotencyClaim | undefined {
  if (key === undefined) return undefined;
  return { key: textInput(key, 'idempotency_key'), requestHash: canonicalHash({ operation, ...parameters }) };
}

const uuid = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function uuidInput(value: string, field: string): string {
  if (!uuid.test(value)) throw invalidRequest(`${field} must be a UUID`, { field });
  return value.toLowerCase();
}
