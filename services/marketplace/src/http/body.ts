import { ServiceError } from '@platform/kit/errors';

/** A JSON object body (an empty body counts as `{}`); anything else is 400. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new ServiceError('invalid_request', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** An optional string field; present and not a string is 400 naming it. */
export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ServiceError('invalid_request', `${field} must be a string`, { details: { field } });
  return value;
}

/** A header as one string, or undefined. */
export function header(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
