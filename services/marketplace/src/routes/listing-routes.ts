import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import { canonicalJson } from '@platform/kit/canonical-json';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { routeOf } from '@platform/kit/http/route-of';
import { uuidv7 } from '@platform/kit/ids';
import { evmAddress, nullable, openObject } from '@platform/kit/wire-schemas';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { conflict } from '../http/errors.ts';
import { idempotencyKeyOf, idempotent } from '../http/idempotent.ts';
import { editable, type ListingAction } from '../listings/listing-states.ts';
import { type ListingView, loadListingView } from '../listings/listing-view.ts';
import { insertDraft, manifestColumns, slugTaken, updateListingIf } from '../listings/listings.repository.ts';
import { checkManifest, type ManifestSettings, manifestJsonSchema } from '../listings/manifest-schema.ts';
import type { Manifest } from '../listings/manifest-types.ts';
import { ownedListing } from '../listings/owned-listing.ts';
import { changeState, type StateDeps } from '../listings/publish.ts';
import { createRegistryClient, type ServiceRegistryClient } from '../registry/registry-client.ts';
import { answers, ListingView as ListingViewSchema } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

const slugPattern = /^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$/;
const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IdParams = Type.Object({ id: Type.String({ pattern: uuidShape.source, maxLength: 36 }) });
const Key = Type.Optional(Type.String({ maxLength: 128 }));
const PayoutDid = Type.String({ maxLength: 256, description: 'did:platform:<label>:<16 hex>: where earnings are paid' });
const MoveBody = Type.Object({ idempotency_key: Key }, { additionalProperties: false });

const invalid = (message: string, problems: Array<{ path: string; message: string }>) =>
  new ServiceError('invalid_request', message, { details: { problems } });

function payoutDidOf(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const parsed = parseDid(value);
  if (!parsed) throw invalid('payout_did is malformed', [{ path: '/payout_did', message: 'must be did:platform:<label>:<16 hex characters>' }]);
  return canonicalDid(parsed);
}

/** A slug from the display name: lower case, runs of anything else as one hyphen, 3–64 characters. */
function slugFrom(name: string): string {
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return base.length >= 3 ? base : `service-${base}`.replace(/-+$/, '');
}

const pricingOf = (manifest: Manifest) => canonicalJson(Object.fromEntries(manifest.operations.map((op) => [op.name, op.pricing])));

/**
 * The registry: `POST /v1/services` (a draft), `PATCH /v1/services/{id}` (owner), publish/pause/delist (owner;
 * table in listing-states.ts), and the public `GET /v1/manifest-schema` and `GET /v1/registry`. Writes take an
 * `Idempotency-Key` (header, or `idempotency_key` in the body) scoped to the developer.
 */
export function registerListingRoutes(app: ServiceApp, deps: RouteDeps): void {
  const settings: ManifestSettings = deps.config;
  const schema = manifestJsonSchema(settings);
  // Built on first publish: a marketplace that never publishes never talks to the node.
  let registry: ServiceRegistryClient | undefined;
  const registryClient = () => {
    if (deps.config.rpcUrl === '') return undefined;
    registry ??= createRegistryClient({
      rpcUrl: deps.config.rpcUrl,
      registryAddress: deps.config.registryAddress,
      dev: deps.config.dev,
      dataDir: deps.config.dataDir,
      signer: deps.identity.signer,
      logger: deps.logger,
    });
    return registry;
  };
  app.addHook('onClose', async () => registry?.close());
  const stateDeps = (): StateDeps => ({ db: deps.db, clock: deps.clock, logger: deps.logger, settings, registry: registryClient() });

  const view = async (id: string): Promise<ListingView> => {
    const listing = await loadListingView(deps.db, id);
    if (!listing) throw new ServiceError('not_found', `no listing ${id}`);
    return listing;
  };
  const owned = (id: string, address: string) => ownedListing(deps.db, id, address);
  // Checked before the body is validated (but after it is read, which a wallet signature covers), so a caller
  // without credentials learns nothing about what a valid body would be.
  const developerOf = new WeakMap<FastifyRequest, string>();
  const authenticate = async (request: FastifyRequest) => {
    developerOf.set(request, (await deps.developers.authenticate(request)).address);
  };
  const developer = (request: FastifyRequest) => developerOf.get(request) as string;
  const once = <T>(request: FastifyRequest, address: string, body: { idempotency_key?: string | undefined }, work: () => Promise<T>) =>
    idempotent(
      deps.db,
      {
        scope: `developer:${address}`,
        key: idempotencyKeyOf(request.headers['idempotency-key'], body.idempotency_key),
        request: { method: request.method, route: routeOf(request).url, params: request.params, body },
        now: deps.clock.now(),
      },
      work,
    );

  // The schema document itself, not wrapped in {ok, data}: tools and editors can point at this URL directly.
  const schemaDocument = openObject('The manifest’s JSON Schema (draft 2020-12)');
  app.get('/v1/manifest-schema', { schema: { description: 'The manifest’s JSON Schema, unwrapped.', response: { 200: schemaDocument } } }, async () => schema);

  const registryView = Type.Object({
    enabled: Type.Boolean({ description: 'Whether listings are registered on chain' }),
    address: nullable(evmAddress('The registry contract')),
    operator: evmAddress('The marketplace’s signer, which registers'),
  });
  app.get('/v1/registry', { schema: { description: 'Where listings are registered on chain.', response: { 200: answers(registryView) } } }, async () => {
    const client = registryClient();
    if (!client) return { ok: true as const, data: { enabled: false, address: null, operator: deps.identity.signer.address } };
    const address = await client.address().catch((error: Error) => {
      throw new ServiceError('unavailable', `the registry cannot be reached: ${error.message}`);
    });
    return { ok: true as const, data: { enabled: true, address, operator: deps.identity.signer.address } };
  });

  app.post('/v1/services', {
    preValidation: authenticate,
    schema: {
      description: 'Create a draft listing from a manifest (developer).',
      body: Type.Object(
        { slug: Type.Optional(Type.String({ maxLength: 64 })), manifest: Type.Unknown(), payout_did: Type.Optional(PayoutDid), idempotency_key: Key },
        { additionalProperties: false },
      ),
      response: { 200: answers(ListingViewSchema), 201: answers(ListingViewSchema) },
    },
    handler: async (request, reply) => {
      const address = developer(request);
      const body = request.body;
      const data = await once(request, address, body, async () => {
        if (body.slug !== undefined && (!slugPattern.test(body.slug) || uuidShape.test(body.slug)))
          throw invalid('slug is malformed', [{ path: '/slug', message: 'must be 3–64 characters of a-z, 0-9 and -, not starting or ending with -' }]);
        const check = checkManifest(body.manifest, settings, '/manifest');
        if (!check.ok) throw invalid(`the manifest has ${check.problems.length} problem(s)`, check.problems);
        const id = uuidv7();
        let slug = body.slug ?? slugFrom(check.manifest.display_name);
        // A derived slug that is taken gets a piece of the id; a slug the developer chose is theirs to change.
        if (body.slug === undefined && (await slugTaken(deps.db, slug))) slug = `${slug}-${id.slice(-8)}`;
        const inserted = await insertDraft(deps.db, deps.clock, {
          id,
          slug,
          owner: address,
          payoutDid: payoutDidOf(body.payout_did) ?? null,
          manifest: check.manifest,
        });
        if (!inserted) throw conflict(`the slug ${slug} is taken; choose another`, 'slug_taken', { slug });
        return view(id);
      });
      reply.code(201);
      return { ok: true as const, data };
    },
  });

  app.patch('/v1/services/:id', {
    preValidation: authenticate,
    schema: {
      description: 'Change a listing’s manifest or payout DID (owner). A pricing change bumps pricing_version.',
      params: IdParams,
      body: Type.Object(
        { manifest: Type.Optional(Type.Unknown()), payout_did: Type.Optional(Type.Union([PayoutDid, Type.Null()])), idempotency_key: Key },
        { additionalProperties: false },
      ),
      response: { 200: answers(ListingViewSchema) },
    },
    handler: async (request) => {
      const address = developer(request);
      const { id } = request.params;
      const body = request.body;
      const data = await once(request, address, body, async () => {
        const row = await owned(id, address);
        if (!editable(row.status)) throw conflict('a delisted listing cannot be changed', 'invalid_transition', { status: row.status });
        const changes: Parameters<typeof updateListingIf>[4] = {};
        if (body.manifest !== undefined) {
          const check = checkManifest(body.manifest, settings, '/manifest');
          if (!check.ok) throw invalid(`the manifest has ${check.problems.length} problem(s)`, check.problems);
          Object.assign(changes, manifestColumns(check.manifest));
          if (pricingOf(check.manifest) !== pricingOf(row.manifest)) changes.pricing_version = row.pricing_version + 1;
        }
        if (body.payout_did !== undefined) changes.payout_did = payoutDidOf(body.payout_did) ?? null;
        if (
          Object.keys(changes).length > 0 &&
          !(await updateListingIf(deps.db, deps.clock, id, { status: row.status, manifestHash: row.manifest_hash }, changes))
        )
          throw conflict('the listing changed meanwhile; read it and try again', 'concurrent_change');
        // Calls on this instance see the change at once (others within a second: payments/listing-cache.ts).
        deps.payments.desk.listings.forget(id);
        return view(id);
      });
      return { ok: true as const, data };
    },
  });

  for (const action of ['publish', 'pause', 'delist'] as const satisfies readonly ListingAction[]) {
    app.post(`/v1/services/:id/${action}`, {
      preValidation: authenticate,
      schema: { description: `Listing state change: ${action} (owner).`, params: IdParams, body: MoveBody, response: { 200: answers(ListingViewSchema) } },
      handler: async (request) => {
        const address = developer(request);
        const { id } = request.params;
        const data = await once(request, address, request.body, async () => {
          await changeState(stateDeps(), await owned(id, address), action);
          // A delisted hosted listing's Workers leave the runner (and the dispatch namespace).
          if (action === 'delist') await deps.hosting.retire(id);
          deps.payments.desk.listings.forget(id);
          return view(id);
        });
        return { ok: true as const, data };
      },
    });
  }
}
