import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { validatedByHandler } from '@platform/kit/wire-schemas';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { HostedArtifactTable, HostedDeploymentTable, ListingTable } from '../db/schema.ts';
import { checkBindings, readArtifactUpload, sealBindings } from '../hosting/artifact-upload.ts';
import { hostedLimits } from '../hosting/hosted-limits.ts';
import { artifactView, deploymentView } from '../hosting/hosted-views.ts';
import { findArtifact, findDeployment, insertArtifact, latestArtifact, listDeployments } from '../hosting/hosting.repository.ts';
import { conflict } from '../http/errors.ts';
import { ownedListing } from '../listings/owned-listing.ts';
import { ArtifactView, DeploymentView } from './hosted-responses.ts';
import { answers } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const HostedParams = Type.Object({ id: Type.String({ pattern: uuidPattern, maxLength: 36, description: 'The listing’s id' }) });
const DeploymentParams = Type.Object({ ...HostedParams.properties, deployment_id: Type.String({ pattern: uuidPattern, maxLength: 36 }) });
const BindingsInput = Type.Array(
  Type.Object(
    {
      type: Type.Union([Type.Literal('plain_text'), Type.Literal('secret_text')]),
      name: Type.String({ maxLength: 64 }),
      text: Type.String({ maxLength: hostedLimits.bindingTextBytes }),
    },
    { additionalProperties: false },
  ),
  { maxItems: hostedLimits.bindings, description: 'Replaces the artifact’s bindings for this deployment (secret_text values are sealed, never shown)' },
);
const DeployBody = Type.Object(
  {
    artifact_id: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The artifact to deploy; default the latest upload' })),
    deployment_id: Type.Optional(Type.String({ pattern: uuidPattern, description: 'An earlier deployment to run again: a rollback (no build)' })),
    bindings: Type.Optional(BindingsInput),
  },
  { additionalProperties: false },
);
const RedeployBody = Type.Object({ bindings: Type.Optional(BindingsInput) }, { additionalProperties: false });
const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    before: Type.Optional(Type.String({ pattern: uuidPattern, description: 'List the deployments older than this one' })),
  },
  { additionalProperties: false },
);

/**
 * Hosted mode's developer routes (owner only): upload an artifact, deploy it (or roll back to an earlier deployment),
 * redeploy the current one, and read deployments with their phases. Logs are in hosted-log-routes.ts.
 */
export function registerHostedRoutes(app: ServiceApp, deps: RouteDeps): void {
  const { db, hosting } = deps;
  const developerOf = new WeakMap<FastifyRequest, string>();
  const authenticate = async (request: FastifyRequest) => {
    developerOf.set(request, (await deps.developers.authenticate(request)).address);
  };
  const owned = (request: FastifyRequest, id: string) => ownedListing(db, id, developerOf.get(request) as string);
  const deployable = (listing: ListingTable) => {
    if (listing.status === 'delisted') throw conflict('a delisted listing runs nothing', 'invalid_transition', { status: listing.status });
    if (listing.manifest.endpoint !== undefined)
      throw conflict(
        'this listing’s manifest names an endpoint, so its calls go there; remove endpoint from the manifest to host it here',
        'listing_not_hosted',
      );
  };
  const deploy = async (listing: ListingTable, artifact: HostedArtifactTable, bindings: HostedDeploymentTable['bindings'], from?: HostedDeploymentTable) => {
    const deployment = await hosting.deployer.deploy({ listingId: listing.id, artifact, bindings, ...(from ? { from } : {}) });
    const current = await findCurrent(listing.id);
    return { ok: true as const, data: deploymentView(deployment, current) };
  };
  const findCurrent = async (listingId: string) =>
    (await db.selectFrom('listings').select('hosted_deployment_id').where('id', '=', listingId).executeTakeFirst())?.hosted_deployment_id ?? null;
  const bindingsOf = (input: unknown, fallback: HostedDeploymentTable['bindings']) =>
    input === undefined ? fallback : sealBindings(checkBindings(input, 'bindings'), hosting.sealer);

  app.register(async (scope) => {
    scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: hostedLimits.uploadBytes }, (_request, body, done) => done(null, body));
    scope.post('/v1/services/:id/artifacts', {
      bodyLimit: hostedLimits.uploadBytes,
      preValidation: authenticate,
      schema: {
        description:
          'Upload a Worker (owner): multipart/form-data with a `metadata` part (JSON: main_module, compatibility_date, egress_allowlist, bindings) and one part per module. 201 when stored, 200 when these bytes were already.',
        params: HostedParams,
        body: {
          content: {
            'multipart/form-data': {
              schema: validatedByHandler({
                type: 'object',
                description: 'The metadata part and the modules, each part named by its module path (checked by the route)',
              }),
            },
          },
        },
        response: { 200: answers(ArtifactView), 201: answers(ArtifactView) },
      },
      handler: async (request, reply) => {
        const listing = await owned(request, (request.params as { id: string }).id);
        deployable(listing);
        const body = request.body as unknown;
        if (!Buffer.isBuffer(body)) throw new ServiceError('invalid_request', 'an upload is multipart/form-data', { details: { field: 'body' } });
        const input = await readArtifactUpload(body, request.headers['content-type'] ?? '', {
          sealer: hosting.sealer,
          allowPrivateHosts: deps.config.allowPrivateEndpoints,
        });
        const stored = await insertArtifact(db, deps.clock, listing.id, input);
        const artifact = await findArtifact(db, listing.id, input.id);
        if (!artifact) throw new Error('an artifact was stored and then vanished');
        reply.code(stored ? 201 : 200);
        return { ok: true as const, data: artifactView(artifact) };
      },
    });
  });

  app.post('/v1/services/:id/deploy', {
    preValidation: authenticate,
    schema: {
      description:
        'Build and deploy an artifact (the latest by default), or run an earlier deployment again (a rollback). Answers once it is running or failed.',
      params: HostedParams,
      body: DeployBody,
      response: { 201: answers(DeploymentView) },
    },
    handler: async (request, reply) => {
      const listing = await owned(request, request.params.id);
      deployable(listing);
      const body = request.body ?? {};
      if (body.artifact_id !== undefined && body.deployment_id !== undefined)
        throw new ServiceError('invalid_request', 'name an artifact_id or a deployment_id (a rollback), not both', { details: { field: 'deployment_id' } });
      reply.code(201);
      if (body.deployment_id !== undefined) {
        const earlier = await findDeployment(db, listing.id, body.deployment_id);
        if (!earlier) throw new ServiceError('not_found', `this listing has no deployment ${body.deployment_id}`);
        if (earlier.bundle === null) throw conflict('that deployment never finished its build, so there is nothing to run again', 'not_runnable');
        const artifact = await findArtifact(db, listing.id, earlier.artifact_id);
        if (!artifact) throw new Error(`deployment ${earlier.id} names an artifact that is gone`);
        return deploy(listing, artifact, bindingsOf(body.bindings, earlier.bindings), earlier);
      }
      const artifact = body.artifact_id === undefined ? await latestArtifact(db, listing.id) : await findArtifact(db, listing.id, body.artifact_id);
      if (!artifact)
        throw new ServiceError(
          'not_found',
          body.artifact_id === undefined ? 'this listing has no artifact yet: upload one first' : `this listing has no artifact ${body.artifact_id}`,
        );
      return deploy(listing, artifact, bindingsOf(body.bindings, artifact.bindings));
    },
  });

  app.post('/v1/services/:id/redeploy', {
    preValidation: authenticate,
    schema: {
      description: 'Build and deploy the current deployment’s artifact again (the latest upload when none runs), with new bindings if given.',
      params: HostedParams,
      body: RedeployBody,
      response: { 201: answers(DeploymentView) },
    },
    handler: async (request, reply) => {
      const listing = await owned(request, request.params.id);
      deployable(listing);
      const currentId = await findCurrent(listing.id);
      const current = currentId === null ? undefined : await findDeployment(db, listing.id, currentId);
      const artifact = current ? await findArtifact(db, listing.id, current.artifact_id) : await latestArtifact(db, listing.id);
      if (!artifact) throw new ServiceError('not_found', 'this listing has no artifact yet: upload one first');
      reply.code(201);
      return deploy(listing, artifact, bindingsOf(request.body?.bindings, current?.bindings ?? artifact.bindings));
    },
  });

  app.get('/v1/services/:id/deployments', {
    preValidation: authenticate,
    schema: {
      description: 'The listing’s deployments, newest first, each with its phases and their times (owner).',
      params: HostedParams,
      querystring: PageQuery,
      response: {
        200: answers(
          Type.Object({
            deployments: Type.Array(DeploymentView),
            current: Type.Union([Type.String(), Type.Null()]),
            next_before: Type.Union([Type.String(), Type.Null()]),
          }),
        ),
      },
    },
    handler: async (request) => {
      const listing = await owned(request, request.params.id);
      const limit = request.query.limit ?? 20;
      const rows = await listDeployments(db, listing.id, { limit, before: request.query.before });
      const page = rows.slice(0, limit);
      const current = listing.hosted_deployment_id ?? null;
      return {
        ok: true as const,
        data: {
          deployments: page.map((row) => deploymentView(row, current)),
          current,
          next_before: rows.length > limit ? (page.at(-1)?.id ?? null) : null,
        },
      };
    },
  });

  app.get('/v1/services/:id/deployments/:deployment_id', {
    preValidation: authenticate,
    schema: { description: 'One deployment with its phases (owner).', params: DeploymentParams, response: { 200: answers(DeploymentView) } },
    handler: async (request) => {
      const listing = await owned(request, request.params.id);
      const deployment = await findDeployment(db, listing.id, request.params.deployment_id);
      if (!deployment) throw new ServiceError('not_found', `this listing has no deployment ${request.params.deployment_id}`);
      return { ok: true as const, data: deploymentView(deployment, listing.hosted_deployment_id) };
    },
  });
}
