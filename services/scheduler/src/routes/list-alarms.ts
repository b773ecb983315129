import { okSchema } from '@platform/kit/envelope';
import { invalidRequest } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { principalOf } from '@platform/kit/http/principal';
import { Type } from 'typebox';
import { AlarmView, alarmView } from '../alarms/alarm-view.ts';
import { alarmLimits as limits } from '../alarms/limits.ts';
import type { RouteDeps } from './route-deps.ts';

export function registerListAlarms(app: ServiceApp, deps: RouteDeps): void {
  app.get('/v1/alarms', {
    schema: {
      description: "The caller's alarms, most recent first.",
      // Checked by hand below so that "abc", "0" and "501" all get one clear message.
      querystring: Type.Object({ limit: Type.Optional(Type.String({ description: `1 to ${limits.listMax}, default ${limits.listDefault}` })) }),
      response: { 200: okSchema(Type.Object({ alarms: Type.Array(AlarmView), count: Type.Integer() })) },
    },
    handler: async (request) => {
      const limit = parseLimit(request.query.limit);
      const rows = await deps.repository.listOwned(principalOf(request).did, limit);
      return { ok: true as const, data: { alarms: rows.map(alarmView), count: rows.length } };
    },
  });
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return limits.listDefault;
  const limit = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= limits.listMax)) throw invalidRequest(`limit must be an integer from 1 to ${limits.listMax}`);
  return limit;
}
