import { ok } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { isUuid } from '@platform/kit/ids';
import type { FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { type Static, Type } from 'typebox';
import { callerVerifier } from '../http/caller-auth.ts';
import { idempotencyKeyOf, idempotent } from '../http/idempotent.ts';
import { limits } from '../limits.ts';
import { listingView } from '../listings/listing-view.ts';
import { availableOf, earningsOf } from '../payments/earnings.ts';
import { callerInvocationView } from '../payments/invocation-view.ts';
import { payoutView } from '../payments/payouts.ts';
import { money } from '../payments/pricing.ts';
import { ListingParams, PayoutBody } from './payment-bodies.ts';
import { answers, Earnings, ListingPage, ListingView, Me, PayoutView, Spend } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

/**
 * Dashboards: `/v1/me` for whoever the credentials name (a caller, a developer, or both), the caller's spend,
 * and the owner's services, earnings and payouts.
 */
export function registerDashboardRoutes(app: ServiceApp, deps: RouteDeps): void {
  const { db, payments } = deps;
  const verifyCaller = callerVerifier(deps);
  const callerOf = (request: FastifyRequest) => verifyCaller(request).did;
  const developerOf = async (request: FastifyRequest) => (await deps.developers.authenticate(request)).address;

  const meSchema = {
    description: 'Whoever the credentials name: the caller’s spend, the developer’s services, the marketplace.',
    response: { 200: answers(Me) },
  };
  app.get('/v1/me', { schema: meSchema }, async (request) => {
    const hasCaller = request.headers.authorization?.startsWith('Bearer ') === true;
    const hasDeveloper = request.headers['x-developer-token'] !== undefined || request.headers.authorization?.startsWith('Wallet ') === true;
    if (!hasCaller && !hasDeveloper)
      throw new ServiceError('unauthorized', 'send a caller token (Bearer + X-Caller-DID) or developer credentials (X-Developer-Token)');
    const caller = hasCaller ? callerOf(request) : undefined;
    const developer = hasDeveloper ? await developerOf(request) : undefined;
    const spend = caller
      ? await db
          .selectFrom('invocations')
          .select([sql<string>`count(*)`.as('calls'), sql<string>`coalesce(sum(cost_micros), 0)`.as('spent')])
          .where('caller_did', '=', caller)
          .executeTakeFirstOrThrow()
      : undefined;
    const listings = developer
      ? await db.selectFrom('listings').select(sql<string>`count(*)`.as('count')).where('owner_address', '=', developer).executeTakeFirstOrThrow()
      : undefined;
    return ok({
      caller: caller && spend ? { did: caller, calls: Number(spend.calls), spent: money(BigInt(spend.spent)) } : null,
      developer: developer && listings ? { address: developer, services: Number(listings.count) } : null,
      marketplace: { did: deps.identity.agent.did, signer: deps.identity.signer.address, eip712_chain_id: deps.config.eip712ChainId },
    });
  });

  const spendSchema = { description: 'The caller’s spend by service and its invocations, newest first.', response: { 200: answers(Spend) } };
  app.get<{ Querystring: Record<string, string> }>('/v1/me/spend', { schema: spendSchema }, async (request) => {
    const caller = callerOf(request);
    const { limit, cursor } = pageOf(request.query);
    let query = db
      .selectFrom('invocations')
      .selectAll()
      .where('caller_did', '=', caller)
      .orderBy('id', 'desc')
      .limit(limit + 1);
    if (cursor) query = query.where('id', '<', cursor);
    const rows = await query.execute();
    const byService = await db
      .selectFrom('invocations')
      .select(['listing_id', sql<string>`count(*)`.as('calls'), sql<string>`coalesce(sum(cost_micros), 0)`.as('spent')])
      .where('caller_did', '=', caller)
      .groupBy('listing_id')
      .orderBy('spent', 'desc')
      .limit(100)
      .execute();
    const total = byService.reduce((sum, row) => sum + BigInt(row.spent), 0n);
    return ok({
      total: money(total),
      by_service: byService.map((row) => ({ service_id: row.listing_id, calls: Number(row.calls), spent: money(BigInt(row.spent)) })),
      items: rows.slice(0, limit).map(callerInvocationView),
      next_cursor: rows.length > limit ? (rows[limit - 1]?.id ?? null) : null,
    });
  });

  const servicesSchema = {
    description: 'The developer’s listings, newest first.',
    response: { 200: answers(Type.Object({ results: Type.Array(ListingView), next_cursor: ListingPage.properties.next_cursor })) },
  };
  app.get<{ Querystring: Record<string, string> }>('/v1/me/services', { schema: servicesSchema }, async (request) => {
    const owner = await developerOf(request);
    const { limit, cursor } = pageOf(request.query);
    let query = db
      .selectFrom('listings')
      .selectAll()
      .where('owner_address', '=', owner)
      .orderBy('id', 'desc')
      .limit(limit + 1);
    if (cursor) query = query.where('id', '<', cursor);
    const rows = await query.execute();
    const shown = rows.slice(0, limit);
    const stats =
      shown.length === 0
        ? []
        : await db
            .selectFrom('listing_stats')
            .selectAll()
            .where(
              'listing_id',
              'in',
              shown.map((row) => row.id),
            )
            .execute();
    const statsOf = new Map(stats.map((row) => [row.listing_id, row]));
    return ok({ results: shown.map((row) => listingView(row, statsOf.get(row.id))), next_cursor: rows.length > limit ? (shown.at(-1)?.id ?? null) : null });
  });

  const earningsSchema = { description: 'The developer’s earnings per service and recent payouts.', response: { 200: answers(Earnings) } };
  app.get('/v1/me/earnings', { schema: earningsSchema }, async (request) => {
    const owner = await developerOf(request);
    const listings = await db.selectFrom('listings').select(['id', 'slug', 'payout_did']).where('owner_address', '=', owner).execute();
    const ids = listings.map((row) => row.id);
    const earnings = await earningsOf(db, ids);
    const services = listings.map((listing) => {
      const entry = earnings.get(listing.id) ?? { earned: 0n, accruing: 0n, paid_out: 0n, pending: 0n, listing_id: listing.id };
      return {
        service_id: listing.id,
        slug: listing.slug,
        payout_did: listing.payout_did,
        earned: money(entry.earned),
        accruing: money(entry.accruing),
        paid_out: money(entry.paid_out),
        pending: money(entry.pending),
        available: money(availableOf(entry)),
      };
    });
    const sum = (pick: (entry: { earned: bigint; accruing: bigint; paid_out: bigint; pending: bigint }) => bigint) =>
      money([...earnings.values()].reduce((total, entry) => total + pick(entry), 0n));
    return ok({
      earned: sum((entry) => entry.earned),
      accruing: sum((entry) => entry.accruing),
      paid_out: sum((entry) => entry.paid_out),
      services,
      payouts: (await payments.payouts.recent(ids, 50)).map(payoutView),
    });
  });

  const payoutSchema = {
    description: 'Pay a service’s available earnings to its payout DID (owner).',
    params: ListingParams,
    body: PayoutBody,
    response: { 200: answers(PayoutView) },
  };
  app.post<{ Params: { id: string }; Body: Static<typeof PayoutBody> }>('/v1/services/:id/payout', { schema: payoutSchema }, async (request) => {
    const owner = await developerOf(request);
    if (!isUuid(request.params.id)) throw new ServiceError('not_found', 'service not found');
    const key = idempotencyKeyOf(request.headers['idempotency-key'], request.body.idempotency_key);
    const payout = await idempotent(db, { scope: `payout:${owner}`, key, request: { service: request.params.id }, now: deps.clock.now() }, () =>
      payments.payouts.request(request.params.id, owner),
    );
    return ok(payout);
  });
}

function pageOf(query: Record<string, string>): { limit: number; cursor: string | undefined } {
  const limitText = query.limit ?? String(limits.pageDefault);
  if (!/^[1-9][0-9]{0,3}$/.test(limitText) || Number(limitText) > limits.pageMax)
    throw new ServiceError('invalid_request', `limit must be an integer from 1 to ${limits.pageMax}`, { details: { field: 'limit' } });
  const cursor = query.cursor;
  if (cursor !== undefined && !isUuid(cursor))
    throw new ServiceError('invalid_request', 'cursor is not one this service gave out', { details: { field: 'cursor' } });
  return { limit: Number(limitText), cursor };
}
