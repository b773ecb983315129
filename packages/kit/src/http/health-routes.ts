import { Type } from 'typebox';
import { okSchema } from '../envelope.ts';
import type { ServiceApp } from './create-app.ts';

export interface HealthOptions {
  service: string;
  version: string;
  ping: () => Promise<boolean>;
  /** More to say in `/healthz` (a `status` here replaces `ok`, e.g. `alarm`, while the answer stays 200: alive). */
  details?: () => Record<string, unknown>;
}

/** `GET /` (service, version, health path) and `GET /healthz` (pings the database; 503 with `db:false` when it is down). */
export function registerHealthRoutes(app: ServiceApp, options: HealthOptions): void {
  app.get('/', {
    schema: {
      description: 'Service name and version.',
      response: { 200: okSchema(Type.Object({ service: Type.String(), version: Type.String(), health: Type.String() })) },
    },
    handler: async () => ({ ok: true as const, data: { service: options.service, version: options.version, health: '/healthz' } }),
  });

  // Liveness: pings the database; 503 with db:false when it is unreachable.
  app.get('/healthz', {
    handler: async (_request, reply) => {
      const db = await options.ping();
      if (db) return { ok: true, data: { status: 'ok', version: options.version, db, ...options.details?.() } };
      return reply.status(503).send({
        ok: false,
        data: { status: 'unavailable', version: options.version, db },
        error: { code: 'unavailable', message: 'database unreachable', retryable: true },
      });
    },
  });
}
