import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { safeEqual } from '@platform/kit/auth/safe-equal';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { documentSecurity } from '@platform/kit/http/openapi';
import { bearerFrom } from '@platform/kit/http/transport-bearer';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { UserRow, UserState } from '../db/schema.ts';
import { withRetryAfter } from './authenticate.ts';
import { environmentUser } from './proxy-route.ts';
import { answers, InviteView, UserView } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

/** How long POST /admin/users waits for another instance's provisioning of the same user. */
const provisioningWaitMs = 60_000;

const userIdParam = Type.Object({ id: Type.String({ format: 'uuid', description: 'The identity-provider user id (a UUID)' }) });

/** A bearer on every route of a scope, compared in constant time, and described as the scope's routes' security. */
export function requireBearer(scope: FastifyInstance, token: string, name: string, scheme: string): void {
  documentSecurity(scope, scheme, { type: 'http', scheme: 'bearer', description: `${name}.` }, () => 'required');
  scope.addHook('onRequest', async (request) => {
    const presented = bearerFrom(request);
    if (presented === undefined) throw new ServiceError('unauthorized', `missing bearer (Authorization: Bearer <${name}>)`);
    if (!safeEqual(presented, token)) throw new ServiceError('unauthorized', `invalid ${name}`);
  });
}

async function userView(row: UserRow, deps: RouteDeps) {
  const user = environmentUser(row);
  return {
    idp_user_id: row.idp_user_id,
    email: row.email,
    handle: row.handle,
    region: row.region,
    state: row.state,
    environment: {
      provider: row.provider,
      id: row.environment_id,
      address: row.address,
      volume: row.volume,
      status: row.state === 'deleted' ? 'absent' : await deps.provider.state(user),
    },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The admin routes, mounted only when ROUTER_ADMIN_TOKEN is set. */
export async function registerAdminRoutes(app: ServiceApp, deps: RouteDeps): Promise<void> {
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    requireBearer(scope, deps.config.adminToken, 'ROUTER_ADMIN_TOKEN', 'adminToken');
    const found = async (id: string) => {
      const row = await deps.users.get(id);
      if (row === undefined) throw new ServiceError('not_found', `no user ${id}`);
      return row;
    };
    const move = async (id: string, to: UserState, from: UserState[], refusal: string) => {
      const row = await found(id);
      const moved = await deps.users.setState(id, to, from);
      deps.directory.invalidate(id);
      if (moved === undefined) throw new ServiceError('conflict', `user ${id} is ${row.state}: ${refusal}`, { details: { state: row.state } });
      return moved;
    };

    scope.post('/admin/users', {
      schema: {
        description: 'Creates the user (or updates email, handle, region) and ensures their environment and volume; answers once the provider has them.',
        body: Type.Object(
          {
            idp_user_id: Type.String({ format: 'uuid' }),
            email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
            handle: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{1,38}$' })),
            region: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,32}$' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: answers(UserView), 201: answers(UserView) },
      },
      handler: async (request, reply) => {
        const id = request.body.idp_user_id.toLowerCase();
        const profile = { email: request.body.email, handle: request.body.handle, region: request.body.region };
        const existing = await deps.users.get(id);
        if (existing?.state === 'deleted')
          throw new ServiceError('conflict', `user ${id} was deleted; a deleted user is not created again`, { details: { state: 'deleted' } });
        if (existing) await deps.users.touch(id, profile);
        let row = await deps.provisioner.provision(id, profile).catch((error) => {
          throw withRetryAfter(reply, error);
        });
        // Another instance is provisioning this user: block until it has finished, as the spec's route does.
        for (let waited = 0; row.state === 'provisioning' && waited < provisioningWaitMs; waited += 100) {
          await deps.clock.sleep(100);
          row = (await deps.users.get(id)) ?? row;
        }
        deps.directory.invalidate(id);
        reply.status(existing ? 200 : 201);
        return { ok: true as const, data: await userView((await deps.users.get(id)) ?? row, deps) };
      },
    });

    scope.get('/admin/users/:id', {
      schema: { description: 'One user row with its environment.', params: userIdParam, response: { 200: answers(UserView) } },
      handler: async (request) => ({ ok: true as const, data: await userView(await found(request.params.id.toLowerCase()), deps) }),
    });

    scope.delete('/admin/users/:id', {
      schema: {
        description: 'Destroys the environment and its volume; the user becomes deleted (their requests get 410).',
        params: userIdParam,
        response: { 200: answers(UserView) },
      },
      handler: async (request) => {
        const id = request.params.id.toLowerCase();
        const row = await found(id);
        if (row.state !== 'deleted') await deps.provider.destroy(environmentUser(row));
        const moved = row.state === 'deleted' ? row : await move(id, 'deleted', ['active', 'provisioning', 'suspended'], 'cannot be deleted');
        return { ok: true as const, data: await userView(moved, deps) };
      },
    });

    scope.post('/admin/users/:id/suspend', {
      schema: { description: 'Stops the environment; the user’s requests get 451 until restored.', params: userIdParam, response: { 200: answers(UserView) } },
      handler: async (request) => {
        const id = request.params.id.toLowerCase();
        const moved = await move(id, 'suspended', ['active', 'suspended'], 'only an active user can be suspended');
        await deps.provider.stop(environmentUser(moved));
        return { ok: true as const, data: await userView(moved, deps) };
      },
    });

    scope.post('/admin/users/:id/restore', {
      schema: {
        description: 'Makes a suspended user active again (the environment starts on their next request).',
        params: userIdParam,
        response: { 200: answers(UserView) },
      },
      handler: async (request) => {
        const moved = await move(request.params.id.toLowerCase(), 'active', ['suspended', 'active'], 'only a suspended user can be restored');
        return { ok: true as const, data: await userView(moved, deps) };
      },
    });

    scope.post('/admin/invites', {
      schema: {
        description: 'Creates an invite code: `uses` redemptions (default 1), optionally expiring.',
        body: Type.Object(
          {
            uses: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
            expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 31_536_000 })),
            note: Type.Optional(Type.String({ maxLength: 500 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: answers(InviteView) },
      },
      handler: async (request, reply) => {
        const expiresIn = request.body.expires_in_seconds;
        const invite = await deps.invites.create({
          uses: request.body.uses ?? 1,
          expiresAt: expiresIn === undefined ? null : new Date(deps.clock.now().getTime() + expiresIn * 1000),
          note: request.body.note ?? null,
        });
        reply.status(201);
        return { ok: true as const, data: inviteView(invite) };
      },
    });

    scope.get('/admin/invites', {
      schema: {
        description: 'Invite codes, newest first.',
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })) }),
        response: { 200: answers(Type.Object({ invites: Type.Array(InviteView) })) },
      },
      handler: async (request) => ({ ok: true as const, data: { invites: (await deps.invites.list(request.query.limit ?? 100)).map(inviteView) } }),
    });
  });
}

function inviteView(invite: { code: string; uses: number; used: number; expires_at: Date | null; note: string | null; created_at: Date }) {
  return {
    code: invite.code,
    uses: invite.uses,
    used: invite.used,
    expires_at: invite.expires_at?.toISOString() ?? null,
    note: invite.note,
    created_at: invite.created_at.toISOString(),
  };
}
