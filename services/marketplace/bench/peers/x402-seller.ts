import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/hono';
import { Hono } from 'hono';

/*
 * The x402 side of the paid bench: a seller as x402's README sets one up (Hono, `@x402/hono`'s paymentMiddleware,
 * a resource server with `@x402/evm`'s exact scheme and an HTTP client of the local facilitator), in a process of
 * its own, selling the bench provider's `echo` at the price of one of our calls (0.001 = 1,000 token units). The
 * paid route forwards the call's arguments to the same provider stand-in the marketplace calls and answers what it
 * answered: a provider failure is the route's failure, after which the middleware settles nothing.
 */

export interface X402SellerSettings {
  facilitatorUrl: string;
  providerUrl: string;
  network: `${string}:${string}`;
  payTo: string;
  asset: string;
  /** Token units per call. */
  amount: string;
  /** The token's EIP-712 domain, which the payer signs under. */
  domain: { name: string; version: string };
}

export type X402SellerProcess = Child<typeof handlers, { url: string; pid: number }>;

const handlers = {
  cpu: () => process.cpuUsage(),
};

export function startX402Seller(settings: X402SellerSettings): Promise<X402SellerProcess> {
  return forkChild(fileURLToPath(import.meta.url), settings);
}

async function main(settings: X402SellerSettings): Promise<void> {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: settings.facilitatorUrl })).register(settings.network, new ExactEvmScheme());
  const routes = {
    'POST /echo': {
      accepts: {
        scheme: 'exact',
        network: settings.network,
        payTo: settings.payTo,
        price: { amount: settings.amount, asset: settings.asset, extra: settings.domain },
        maxTimeoutSeconds: 60,
      },
      description: 'the bench provider echo, one call',
      mimeType: 'application/json',
    },
  };
  const app = new Hono();
  app.use(paymentMiddleware(routes, resourceServer));
  let n = 0;
  app.post('/echo', async (c) => {
    const args = (await c.req.json()) as Record<string, unknown>;
    const answer = await fetch(`${settings.providerUrl}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ invocation_id: `x402-${n++}`, operation: 'echo', args, caller_did: 'x402', max_units: 1, unit: 'call' }),
    });
    if (answer.status !== 200) return c.json({ error: 'provider_failed', status: answer.status }, 502);
    return c.json(await answer.json());
  });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  serveChild(handlers, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pid: process.pid });
}

if (import.meta.main) await main(JSON.parse(process.argv[2] ?? '{}') as X402SellerSettings);
