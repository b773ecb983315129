import { type TProperties, Type } from 'typebox';
import { FailureSchema, okSchema } from '../envelope.ts';
import type { ServiceApp } from './create-app.ts';

export interface HealthOptions {
  service: string;
  version: string;
  ping: () => Promise<boolean>;
  /** More to say in `/healthz` (a `status` here replaces `ok`, e.g. `alarm`, while the answer stays 200: alive). */
  details?: () => Record<string, unknown>;
  /** The members `details` may add, for the response schema (which is also what serialises them). */
  detailsSchema?: TProperties;
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

  const health = {
    status: Type.String({ description: '`ok`, or what is wrong while the process stays alive (e.g. `alarm`)' }),
    version: Type.String(),
    db: Type.Boolean({ description: 'Whether the database answered' }),
  };
  // Liveness: pings the database; 503 with db:false when it is unreachable.
  app.get('/healthz', {
    schema: {
      description: 'Liveness: the process answers and its database with it.',
      response: {
        200: okSchema(Type.Object({ ...health, ...options.detailsSchema })),
        503: Type.Object(
          { ok: Type.Literal(false), data: Type.Object(health), error: FailureSchema.properties.error },
          { description: 'The database does not answer' },
        ),
      },
    },
    handler: async (_request, reply) => {
      const db = await options.ping();
      if (db) return { ok: true as const, data: { status: 'ok', version: options.version, db, ...options.details?.() } };
      return reply.status(503).send({
        ok: false,
        data: { status: 'unavailable', version: options.version, db },
        error: { code: 'unavailable', message: 'database unreachable', retryable: true },
      });
    },
  });
}
