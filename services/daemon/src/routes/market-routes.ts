import { MarketplaceClient, MarketplaceError } from '@platform/client/marketplace-client';
import { ServiceCallError } from '@platform/client/service-session';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { Type } from 'typebox';
import { answers, Invocation, Invocations, MarketReceipt } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';
import { asAgent, notConfigured } from './service-calls.ts';

const invocationId = Type.String({ format: 'uuid' });

/**
 * The agent's own marketplace calls for the console: its invocations (newest first) and each one's EIP-712 receipt,
 * asked of the marketplace as the agent (the caller handshake with its key), so the caller is always this daemon's
 * agent. The receipt is passed on as signed: the page checks the signature itself.
 */
export function registerMarketRoutes(app: ServiceApp, deps: RouteDeps): void {
  const link = deps.config.marketplace;
  // Reads only: this client never pays (a payment would need terms of at most one micro-unit).
  const market = link ? new MarketplaceClient({ baseUrl: link.url, key: deps.identity.agentKey, maxPayment: '0.000001' }) : undefined;
  const ask = <T>(call: (client: MarketplaceClient) => Promise<T>) => {
    if (market === undefined) throw notConfigured('marketplace', 'PLATFORM_MARKETPLACE_URL');
    return asAgent('the marketplace', async () => {
      try {
        return await call(market);
      } catch (error) {
        // The marketplace's own envelope ({error, message, detail}) becomes a refusal asAgent knows.
        if (!(error instanceof MarketplaceError)) throw error;
        const message = error.message.replace(/^\d+ [a-z_]+: /, '');
        const reason = typeof error.detail.reason === 'string' ? error.detail.reason : undefined;
        throw new ServiceCallError(error.status, error.code, message, error.status === 409, reason);
      }
    });
  };

  app.get('/invocations', {
    schema: {
      description: 'This agent’s marketplace invocations, newest first, with its spend by service (the marketplace’s /v1/me/spend).',
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(invocationId),
      }),
      response: { 200: answers(Invocations) },
    },
    handler: async (request) => ({ ok: true as const, data: await ask((client) => client.spend(request.query)) }),
  });

  app.get('/invocations/:id', {
    schema: {
      description: 'One of this agent’s invocations, with its result once it succeeded.',
      params: Type.Object({ id: invocationId }),
      response: { 200: answers(Invocation) },
    },
    handler: async (request) => ({ ok: true as const, data: await ask((client) => client.invocation(request.params.id)) }),
  });

  app.get('/invocations/:id/receipt', {
    schema: {
      description: 'The marketplace’s EIP-712 receipt of one of this agent’s invocations, as signed (409 while the call is served).',
      params: Type.Object({ id: invocationId }),
      response: { 200: answers(MarketReceipt) },
    },
    handler: async (request) => ({ ok: true as const, data: await ask((client) => client.receipt(request.params.id)) }),
  });
}
