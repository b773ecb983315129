import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import { ColdStarts, healthResponses } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

/** The internal listener's health: the database, the environments running, cold starts and their durations. */
export function registerInternalHealth(app: ServiceApp, deps: RouteDeps): void {
  app.get('/healthz', {
    schema: {
      description: 'The internal listener’s health: the database, the environments running, cold starts.',
      response: healthResponses({ version: Type.String(), provider: Type.String(), running: Type.Integer(), cold_starts: ColdStarts }),
    },
    handler: async (_request, reply) => {
      const db = await deps.ping();
      const data = {
        status: db ? 'ok' : 'unavailable',
        version: deps.version,
        db,
        provider: deps.provider.name,
        running: deps.provider.running().length,
        cold_starts: deps.wake.stats(),
      };
      if (!db) return reply.status(503).send({ ok: false, data, error: { code: 'unavailable', message: 'database unreachable', retryable: true } });
      return { ok: true as const, data };
    },
  });
}
