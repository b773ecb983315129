import { SchedulerClient } from '@platform/client/scheduler-client';
import { ServiceCallError } from '@platform/client/service-session';
import { SettlementClient } from '@platform/client/settlement-client';
import { invalidRequest } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { tracedFetch } from '@platform/kit/observability/tracing';
import { Type } from 'typebox';
import { Account, Alarm, Alarms, answers, Holds, Spend } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';
import { asAgent, notConfigured } from './service-calls.ts';

const alarmId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' });

const createAlarmBody = Type.Object(
  {
    wake_message: Type.String({ minLength: 1, maxLength: 16_384, description: 'What the agent is told when it fires' }),
    delay_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 315_360_000 })),
    fire_at: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'ISO 8601 with an offset' })),
    cron_expr: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    label: Type.Optional(Type.String({ maxLength: 200 })),
    conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

/**
 * The person's own account and alarms, for the console: the daemon calls settlement and the scheduler as its agent
 * (its key, its transport bearers), so the owner is always this daemon's user and no service secret leaves it.
 */
export function registerAccountRoutes(app: ServiceApp, deps: RouteDeps): void {
  const { settlement, scheduler } = deps.config;
  const key = deps.identity.agentKey;
  const ledger = settlement ? new SettlementClient({ baseUrl: settlement.url, transportToken: settlement.token, key }) : undefined;
  const alarms = scheduler ? new SchedulerClient({ baseUrl: scheduler.url, transportToken: scheduler.token, key }) : undefined;
  const needLedger = () =>
    ledger ??
    (() => {
      throw notConfigured('settlement', 'PLATFORM_SETTLEMENT_URL');
    })();
  const needAlarms = () =>
    alarms ??
    (() => {
      throw notConfigured('scheduler', 'PLATFORM_SCHEDULER_URL');
    })();

  app.get('/account', {
    schema: {
      description: 'This agent’s settlement account: DID, balance, held, escrow bound, payout address (zeros before the first credit).',
      response: { 200: answers(Account) },
    },
    handler: async () => ({ ok: true as const, data: await asAgent('settlement', () => needLedger().balance()) }),
  });

  app.get('/holds', {
    schema: {
      description: 'This agent’s open holds at settlement, as payer or payee, newest first: amount, counterparty, expiry.',
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
        before: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
      response: { 200: answers(Holds) },
    },
    handler: async (request) => ({ ok: true as const, data: await asAgent('settlement', () => needLedger().openHolds(request.query)) }),
  });

  app.get('/alarms', {
    schema: {
      description: 'This agent’s alarms on the scheduler, newest first.',
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })) }),
      response: { 200: answers(Alarms) },
    },
    handler: async (request) => ({ ok: true as const, data: await asAgent('scheduler', () => needAlarms().listAlarms(request.query.limit)) }),
  });

  app.post('/alarms', {
    schema: {
      description: 'Creates an alarm that wakes this agent: once after delay_seconds or at fire_at, or on cron_expr (in timezone). Exactly one of the three.',
      body: createAlarmBody,
      response: { 201: answers(Alarm) },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const when = [body.delay_seconds, body.fire_at, body.cron_expr].filter((value) => value !== undefined).length;
      if (when !== 1) throw invalidRequest('give exactly one of delay_seconds, fire_at and cron_expr');
      if (body.timezone !== undefined && body.cron_expr === undefined) throw invalidRequest('timezone goes with cron_expr');
      const created = await asAgent('scheduler', () =>
        needAlarms().createAlarm({ kind: body.cron_expr === undefined ? 'once' : 'cron', conversation_id: 'default', ...body }),
      );
      return reply.status(201).send({ ok: true as const, data: created });
    },
  });

  app.get('/spend', {
    schema: {
      description: 'This agent’s model spend at the gateway (its DID is the ledger’s actor): per UTC day and per intent.',
      querystring: Type.Object({
        from: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
        to: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
      }),
      response: { 200: answers(Spend) },
    },
    handler: async (request) => {
      const gateway = deps.config.gateway;
      if (gateway === undefined) throw notConfigured('model gateway', 'PLATFORM_GATEWAY_URL');
      const query = new URLSearchParams(Object.entries(request.query).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const headers: Record<string, string> = { 'x-platform-actor-did': deps.identity.did };
      if (gateway.token !== '') headers.authorization = `Bearer ${gateway.token}`;
      const usage = await asAgent('the gateway', async () => {
        const response = await tracedFetch(`${gateway.url}/usage${query.size > 0 ? `?${query}` : ''}`, { headers, signal: AbortSignal.timeout(10_000) });
        const body = (await response.json().catch(() => undefined)) as { error?: { message?: string; code?: string } } | undefined;
        if (!response.ok)
          throw new ServiceCallError(response.status, body?.error?.code ?? 'invalid_request', body?.error?.message ?? `answered ${response.status}`);
        return body;
      });
      return { ok: true as const, data: usage };
    },
  });

  app.delete('/alarms/:id', {
    schema: {
      description: 'Cancels one of this agent’s alarms (an alarm no longer active is returned unchanged).',
      params: Type.Object({ id: alarmId }),
      response: { 200: answers(Alarm) },
    },
    handler: async (request) => ({ ok: true as const, data: await asAgent('scheduler', () => needAlarms().cancelAlarm(request.params.id)) }),
  });
}
