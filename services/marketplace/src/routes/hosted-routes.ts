import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { validatedByHandler } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import type { DeveloperAuth } from '../developers/developer-auth.ts';
import { MarketplaceFailureSchema } from '../http/errors.ts';
import { ListingParams } from './payment-bodies.ts';

const DeploymentParams = Type.Object({ ...ListingParams.properties, deployment_id: Type.String({ maxLength: 64 }) });

/** Hosted mode (the marketplace building and running a developer's code) is a later issue; its routes say so. */
const hosted: Array<['GET' | 'POST', string]> = [
  ['POST', '/v1/services/:id/artifacts'],
  ['POST', '/v1/services/:id/deploy'],
  ['POST', '/v1/services/:id/redeploy'],
  ['GET', '/v1/services/:id/deployments'],
  ['GET', '/v1/services/:id/deployments/:deployment_id'],
  ['GET', '/v1/services/:id/logs'],
];

export function registerHostedRoutes(app: ServiceApp, developers: DeveloperAuth): void {
  app.register(async (scope) => {
    // Any body (a multipart upload included) is drained unread: the answer is the same whatever was sent.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => {
      payload.resume();
      payload.once('end', () => done(null, undefined));
    });
    for (const [method, url] of hosted)
      scope.route({
        method,
        url,
        schema: {
          description: 'Hosted mode: not available yet (501 not_implemented to a developer; 401 without credentials, as every developer route).',
          params: url.includes(':deployment_id') ? DeploymentParams : ListingParams,
          // Whatever is sent (a multipart upload included) is drained unread until hosted mode defines its bodies.
          ...(method === 'POST' ? { body: { content: { '*/*': { schema: validatedByHandler({ description: 'Not read yet' }) } } } } : {}),
          response: { 501: MarketplaceFailureSchema },
        },
        handler: async (request) => {
          await developers.authenticate(request);
          throw new ServiceError(
            'not_implemented',
            'hosted mode (artifacts, deploy, redeploy, deployments, logs) is not available on this marketplace yet; list a service you run yourself (its manifest names the endpoint)',
          );
        },
      });
  });
}
