import { Type } from 'typebox';
import { badRequest } from '../http/openai-errors.ts';
import { actorRule, ledgerActor } from '../http/platform-headers.ts';

/** Route options shared by the operator routes: they take GATEWAY_ADMIN_TOKEN, not the gateway bearer. */
export const adminRoute = { config: { access: 'admin' } } as const;

export const DayText = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'UTC day, YYYY-MM-DD' });
/** Credits as `formatCredit` writes them: a decimal string with exactly 12 places. */
export const Credit = Type.String({ pattern: '^[0-9]+\\.[0-9]{12}$', description: 'Credits, 12 decimal places' });
export const PageLimit = Type.Integer({ minimum: 1, maximum: 500, default: 100 });

export const RangeQuery = Type.Object(
  { actor: Type.Optional(Type.String({ maxLength: 256 })), from: Type.Optional(DayText), to: Type.Optional(DayText), limit: Type.Optional(PageLimit) },
  { additionalProperties: false },
);

export function actorInput(value: string, param: string): string {
  const actor = ledgerActor(value);
  if (actor === undefined) throw badRequest('invalid_actor', `${param} must be ${actorRule}`, param);
  return actor;
}

/** A real calendar day (2026-02-30 is refused), as YYYY-MM-DD. */
export function dayInput(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined;
  const parsed = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value)
    throw badRequest('invalid_day', `${param} must be a UTC day YYYY-MM-DD`, param);
  return value;
}

export function rangeInput(query: { actor?: string | undefined; from?: string | undefined; to?: string | undefined }) {
  return {
    actor: query.actor === undefined ? undefined : actorInput(query.actor, 'actor'),
    from: dayInput(query.from, 'from'),
    to: dayInput(query.to, 'to'),
  };
}
