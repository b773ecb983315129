import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { catalogPage, discoverPage } from '../discovery/discover.ts';
import { filtersInput, limitInput, queryInput, serviceIdInput } from '../discovery/inputs.ts';
import { loadListingView } from '../listings/listing-view.ts';
import { answers, DiscoverPage, ListingPage, ListingView } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

/*
 * Public discovery: no credentials. Every parameter is text on GET (checked by `discovery/inputs.ts` with one
 * message per field) and typed JSON on POST; unknown parameters are refused on both, so a typo such as
 * `max_price` is a 400 rather than a filter silently not applied.
 */

/** Lengths are checked by the parsers (one message per field), not by the schema. */
const Text = Type.Optional(Type.String());

const CatalogQuery = Type.Object({ limit: Text, cursor: Text }, { additionalProperties: false });

const DiscoverQuery = Type.Object(
  {
    q: Text,
    query: Text,
    kind: Text,
    max_price_wei: Text,
    min_quality: Text,
    min_uptime_bps: Text,
    confidential: Text,
    limit: Text,
    cursor: Text,
  },
  { additionalProperties: false },
);

const DiscoverBody = Type.Object(
  {
    query: Text,
    filters: Type.Optional(
      Type.Object(
        {
          kind: Text,
          max_price_wei: Text,
          min_quality: Text,
          min_uptime_bps: Type.Optional(Type.Integer()),
          confidential: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    limit: Type.Optional(Type.Integer()),
    cursor: Text,
  },
  { additionalProperties: false },
);

const ServiceParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

function oneOf<T>(field: string, inBody: T | undefined, inQuery: T | undefined): T | undefined {
  if (inBody !== undefined && inQuery !== undefined) throw invalidRequest(`give ${field} in the body or in the query string, not both`, { field });
  return inBody ?? inQuery;
}

export function registerDiscoveryRoutes(app: ServiceApp, deps: RouteDeps): void {
  app.get('/v1/catalog', {
    schema: { description: 'Active listings, a page at a time.', querystring: CatalogQuery, response: { 200: answers(ListingPage) } },
    handler: async (request) => {
      const { limit, cursor } = request.query;
      return { ok: true as const, data: await catalogPage(deps.db, { limit: limitInput(limit), cursor }) };
    },
  });

  app.get('/v1/discover', {
    schema: { description: 'Ranked discovery by words and filters.', querystring: DiscoverQuery, response: { 200: answers(DiscoverPage) } },
    handler: async (request) => {
      const { q, query, limit, cursor, ...filters } = request.query;
      if (q !== undefined && query !== undefined && q !== query)
        throw new ServiceError('invalid_request', 'give the query as q or as query, not both', { details: { field: 'q' } });
      const text = queryInput(q ?? query, q === undefined ? 'query' : 'q');
      return {
        ok: true as const,
        data: await discoverPage(deps.db, { query: text, filters: filtersInput(filters), limit: limitInput(limit), cursor }),
      };
    },
  });

  // The spec's pagination is `?limit=&cursor=`; the body may carry them too (one place or the other, not both).
  app.post('/v1/discover', {
    schema: {
      description: 'Ranked discovery, the query in the body.',
      body: DiscoverBody,
      querystring: CatalogQuery,
      response: { 200: answers(DiscoverPage) },
    },
    handler: async (request) => {
      const { query, filters = {} } = request.body;
      const limit = oneOf<string | number>('limit', request.body.limit, request.query.limit);
      const cursor = oneOf('cursor', request.body.cursor, request.query.cursor);
      return {
        ok: true as const,
        data: await discoverPage(deps.db, { query: queryInput(query), filters: filtersInput(filters), limit: limitInput(limit), cursor }),
      };
    },
  });

  app.get('/v1/services/:id', {
    schema: { description: 'One listing (a draft only to its owner).', params: ServiceParams, response: { 200: answers(ListingView) } },
    handler: async (request) => {
      const view = await loadListingView(deps.db, serviceIdInput(request.params.id));
      if (!view || (view.status === 'draft' && !(await isOwner(request, view.owner_address)))) throw new ServiceError('not_found', 'service not found');
      return { ok: true as const, data: view };
    },
  });

  /**
   * A draft is its owner's work in progress: shown to the owner (with developer credentials), and to anyone else
   * as if it did not exist. Paused and delisted listings stay readable, so a caller holding an id learns why it
   * no longer takes calls.
   */
  async function isOwner(request: FastifyRequest, owner: string): Promise<boolean> {
    try {
      const { address } = await deps.developers.authenticate(request);
      return address.toLowerCase() === owner.toLowerCase();
    } catch (error) {
      if (error instanceof ServiceError && error.status < 500) return false;
      throw error;
    }
  }
}
