import { okSchema } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { nonJsonResponse, nullable } from '@platform/kit/wire-schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type ConsoleFile, loadConsoleFiles, pickEncoding } from '../console/console-files.ts';
import { consoleHeaders, originOf } from '../console/console-headers.ts';
import { withRetryAfter } from './authenticate.ts';
import type { RouteDeps } from './route-deps.ts';

/** Where the identity provider sends the browser back, below the router's own origin. */
export const consoleRedirectPath = '/console/';

/**
 * The console (web/console's build) at `/console/`: public static files (the page signs in itself, then calls the
 * router with the user's token), under a strict CSP, and `/console/config.json`, the sign-in settings it starts from.
 */
export function registerConsoleRoutes(app: ServiceApp, deps: RouteDeps): void {
  let files: Map<string, ConsoleFile> | undefined;
  const settings = deps.config.console;

  const connectOrigins = async (): Promise<string[]> => {
    const idp = originOf(deps.config.identityProvider?.url);
    const token = originOf((await deps.verifier?.endpoints().catch(() => undefined))?.token);
    return [idp, token].filter((origin): origin is string => origin !== undefined);
  };

  const send = async (request: FastifyRequest, reply: FastifyReply, path: string) => {
    files ??= loadConsoleFiles(settings.dir);
    if (files === undefined)
      throw new ServiceError('unavailable', 'the console is not built: run `npm run build -w web/console` (npm install builds it)', { retryable: false });
    const file = files.get(path);
    if (file === undefined) throw new ServiceError('not_found', `no console file ${path}`);
    const { encoding, body } = pickEncoding(file, request.headers['accept-encoding']);
    reply.headers(consoleHeaders(await connectOrigins()));
    reply.header('content-type', file.type);
    reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    reply.header('vary', 'accept-encoding');
    if (encoding !== undefined) reply.header('content-encoding', encoding);
    return reply.send(body);
  };

  app.get(
    '/console',
    { schema: { description: 'Redirects to the console at /console/.', response: { 308: Type.Null({ description: 'Location: /console/' }) } } },
    async (_request, reply) => {
      await reply.redirect('/console/', 308);
    },
  );

  app.get('/console/config.json', {
    schema: {
      description: 'The console’s sign-in settings: the identity provider’s endpoints and the public client it signs in as.',
      response: {
        200: okSchema(
          Type.Object({
            client_id: Type.String(),
            scope: Type.String(),
            resource: nullable(Type.String({ description: 'The audience the tokens are asked for' })),
            authorization_endpoint: Type.String(),
            token_endpoint: Type.String(),
            redirect_path: Type.String(),
          }),
        ),
      },
    },
    handler: async (_request, reply) => {
      if (deps.verifier === undefined)
        throw new ServiceError('unavailable', 'no identity provider is configured: set IDP_URL (and ROUTER_IDP_AUDIENCE)', { retryable: false });
      const endpoints = await deps.verifier.endpoints().catch((error) => {
        throw withRetryAfter(reply, error);
      });
      if (endpoints === undefined) throw new ServiceError('unavailable', 'the identity provider publishes no authorization or token endpoint');
      reply.header('cache-control', 'no-cache');
      return {
        ok: true as const,
        data: {
          client_id: settings.clientId,
          scope: settings.scope,
          resource: settings.resource ?? null,
          authorization_endpoint: endpoints.authorization,
          token_endpoint: endpoints.token,
          redirect_path: consoleRedirectPath,
        },
      };
    },
  });

  app.get('/console/*', {
    schema: {
      description: 'The console’s page and its assets (no token: the page signs in itself).',
      response: { 200: nonJsonResponse('text/html', 'The page, or the asset by its own type (JavaScript, CSS, SVG), compressed as the browser accepts') },
    },
    handler: async (request, reply) => {
      const path = (request.params as { '*': string })['*'];
      return send(request, reply, path === '' ? 'index.html' : path);
    },
  });
}
