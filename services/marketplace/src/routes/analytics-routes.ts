import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import { type AnalyticsWindow, serviceAnalytics } from '../discovery/analytics.ts';
import { serviceIdInput } from '../discovery/inputs.ts';
import { ListingParams } from './payment-bodies.ts';
import { answers, ServiceAnalytics } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

const AnalyticsQuery = Type.Object(
  { since: Type.Optional(Type.String()), until: Type.Optional(Type.String()), window: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
const windowUnits = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const maxWindowMs = 366 * 86_400_000;

function instantInput(raw: string | undefined, field: string): Date | undefined {
  if (raw === undefined) return undefined;
  const date = isoInstant.test(raw) ? new Date(raw) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw invalidRequest(`${field} must be an ISO 8601 time with a zone, e.g. 2026-03-01T00:00:00Z`, { field });
  return date;
}

/**
 * The window: `since`/`until` (ISO 8601, `until` exclusive), or `window` (`90m`, `24h`, `7d`, at most 366 days)
 * ending now by the service's clock. Neither: everything the listing ever served.
 */
export function windowInput(query: { since?: string | undefined; until?: string | undefined; window?: string | undefined }, now: Date): AnalyticsWindow {
  if (query.window !== undefined) {
    if (query.since !== undefined || query.until !== undefined) throw invalidRequest('give window, or since/until, not both', { field: 'window' });
    const match = /^([1-9]\d{0,5})([mhd])$/.exec(query.window);
    const ms = match ? Number(match[1]) * windowUnits[match[2] as keyof typeof windowUnits] : Number.NaN;
    if (!(ms <= maxWindowMs)) throw invalidRequest('window must be a duration such as 90m, 24h or 7d, at most 366d', { field: 'window' });
    return { since: new Date(now.getTime() - ms), until: undefined };
  }
  const since = instantInput(query.since, 'since');
  const until = instantInput(query.until, 'until');
  if (since && until && since.getTime() >= until.getTime()) throw invalidRequest('since must be before until', { field: 'since' });
  return { since, until };
}

/** The owner's view of a listing's use. Credentials first: who is asking is settled before anything is looked up. */
export function registerAnalyticsRoutes(app: ServiceApp, deps: RouteDeps): void {
  app.get('/v1/services/:id/analytics', {
    schema: {
      description: 'The owner’s view of a listing’s use in a window.',
      params: ListingParams,
      querystring: AnalyticsQuery,
      response: { 200: answers(ServiceAnalytics) },
    },
    handler: async (request) => {
      const developer = await deps.developers.authenticate(request);
      const id = serviceIdInput(request.params.id);
      const listing = await deps.db.selectFrom('listings').select('owner_address').where('id', '=', id).executeTakeFirst();
      if (!listing) throw new ServiceError('not_found', 'service not found');
      if (listing.owner_address.toLowerCase() !== developer.address.toLowerCase())
        throw new ServiceError('forbidden', 'only the service owner may read its analytics');
      const window = windowInput(request.query, deps.clock.now());
      return { ok: true as const, data: await serviceAnalytics(deps.db, id, window) };
    },
  });
}
