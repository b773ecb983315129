import type { Clock } from '@platform/kit/clock';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MarketplaceConfig } from '../config.ts';
import type { MarketplaceSchema } from '../db/schema.ts';
import type { DeveloperAuth } from '../developers/developer-auth.ts';
import type { Hosting } from '../hosting/hosting.ts';
import type { MarketplaceIdentity } from '../identity.ts';
import type { Payments } from '../payments/payments.ts';

/**
 * What every route group is given; in a file of its own so route files need not import the route list.
 * Groups that need more (the registry's chain client, the payment desk) take it in their own deps, built in compose.ts.
 */
export interface RouteDeps {
  db: Kysely<MarketplaceSchema>;
  clock: Clock;
  logger: Logger;
  config: MarketplaceConfig;
  identity: MarketplaceIdentity;
  /** Caller principal tokens (the DID handshake). */
  tokenKey: Buffer;
  developers: DeveloperAuth;
  /** Quotes, invocations, tabs, receipts and payouts (payments/payments.ts). */
  payments: Payments;
  /** Hosted mode: the runner, deployments and the Workers' logs (hosting/hosting.ts). */
  hosting: Hosting;
}
