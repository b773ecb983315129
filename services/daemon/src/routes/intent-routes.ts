import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import { limits } from '../limits.ts';
import { answers, GateAnswer, IntentDetail, IntentList, IntentStatus, PendingGate } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';
import { answerBody, cancelBody, intentIdParam } from './schemas.ts';
import { gateView, pendingView, statusView } from './views.ts';

const statuses = ['drafting', 'planning', 'executing', 'completed', 'failed', 'cancelled'] as const;

/** Intents: the list, the signed chain, cancel, and the gates. */
export function registerIntentRoutes(app: ServiceApp, deps: RouteDeps): void {
  const { book, runner, gates } = deps;

  app.get('/intents', {
    schema: {
      description: 'Intents, newest first.',
      querystring: Type.Object({
        status: Type.Optional(Type.Union(statuses.map((status) => Type.Literal(status)))),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.pageSize, default: 50 })),
        before: Type.Optional(Type.String({ format: 'date-time', description: 'created_at of the last intent already seen' })),
      }),
      response: { 200: answers(IntentList) },
    },
    handler: async (request) => {
      const { status, limit = 50, before } = request.query;
      const intents = book.list({ limit, ...(status ? { status } : {}), ...(before ? { before } : {}) });
      return { ok: true as const, data: { intents, next_before: intents.length === limit ? (intents.at(-1)?.created_at ?? null) : null } };
    },
  });

  app.get('/intents/:id', {
    schema: {
      description: 'The intent’s signed envelope chain (and its state folded from it), with the public key that verifies it.',
      params: intentIdParam,
      response: { 200: answers(IntentDetail) },
    },
    handler: async (request) => {
      const loaded = await book.get(request.params.id);
      if (loaded === undefined) throw new ServiceError('not_found', `no intent ${request.params.id}`);
      return {
        ok: true as const,
        data: { id: loaded.state.id, status: loaded.state.status, public_key: deps.identity.publicKeyHex, envelopes: loaded.envelopes, state: loaded.state },
      };
    },
  });

  app.post('/intents/:id/cancel', {
    schema: {
      description: 'Cancels a queued intent at once or the walking one between steps; 409 when it has already ended.',
      params: intentIdParam,
      body: cancelBody,
      response: { 200: answers(IntentStatus) },
    },
    handler: async (request) => {
      const state = await runner.cancel(request.params.id, request.body.reason?.trim() || 'cancelled by the user');
      return { ok: true as const, data: statusView(state, runner) };
    },
  });

  app.get('/intents/:id/gates', {
    schema: {
      description: 'The gates waiting for an answer: node_id, question, options.',
      params: intentIdParam,
      response: { 200: answers(Type.Object({ pending: Type.Array(PendingGate) })) },
    },
    handler: async (request) => {
      const loaded = await book.get(request.params.id);
      if (loaded === undefined) throw new ServiceError('not_found', `no intent ${request.params.id}`);
      return { ok: true as const, data: { pending: pendingView(loaded.state) } };
    },
  });

  app.post('/intents/:id/gates/:nid/answer', {
    schema: {
      description: 'Approves or denies a gate. The decision is recorded before the step runs; answering again returns the first decision (recorded: false).',
      params: Type.Object({ id: intentIdParam.properties.id, nid: Type.String({ minLength: 1, maxLength: 64 }) }),
      body: answerBody,
      response: { 200: answers(GateAnswer) },
    },
    handler: async (request) => {
      const outcome = await gates.answer(request.params.id, request.params.nid, {
        approved: request.body.approved,
        answer: request.body.answer ?? '',
        by: 'user',
      });
      return { ok: true as const, data: { recorded: outcome.recorded, gate: gateView(outcome.gate) } };
    },
  });
}
