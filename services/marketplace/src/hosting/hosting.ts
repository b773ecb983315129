import type { Clock } from '@platform/kit/clock';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MarketplaceConfig } from '../config.ts';
import type { MarketplaceSchema } from '../db/schema.ts';
import { CloudflareRunner } from './cloudflare/cloudflare-runner.ts';
import { Deployer } from './deployer.ts';
import { HostedCalls } from './hosted-calls.ts';
import { failInterruptedDeployments, runningDeploymentIds } from './hosting.repository.ts';
import { LogBook } from './log-book.ts';
import type { HostedRunner } from './runner.ts';
import { SecretSealer } from './secrets.ts';
import { WorkerdRunner } from './workerd/workerd-runner.ts';

/** Hosted mode, wired once per process: the runner the settings choose, calls to it, deployments and their logs. */
export interface Hosting {
  runner: HostedRunner;
  calls: HostedCalls;
  deployer: Deployer;
  logs: LogBook;
  sealer: SecretSealer;
  /** Stops a delisted listing's deployments: they leave the runner once their calls in flight end. */
  retire(listingId: string): Promise<void>;
  /** Fails the deployments a stop interrupted (at start). */
  recover(): Promise<void>;
  close(): Promise<void>;
}

export function createHosting(deps: {
  db: Kysely<MarketplaceSchema>;
  clock: Clock;
  logger: Logger;
  config: MarketplaceConfig;
  /** The service secret: secret bindings are sealed under a key derived from it. */
  secret: string;
  /** Called when a listing's calls move to another deployment (the listing cache forgets it). */
  switched: (listingId: string) => void;
  /** A runner of the test's own, in place of the one the settings name. */
  runner?: HostedRunner;
}): Hosting {
  const { db, clock, logger, config } = deps;
  const runner =
    deps.runner ??
    (config.hostedRunner === 'cloudflare'
      ? new CloudflareRunner({ ...config.cloudflare, logger })
      : new WorkerdRunner({ logger, allowPrivate: config.allowPrivateEndpoints }));
  const sealer = new SecretSealer(deps.secret);
  const logs = new LogBook(db, logger);
  const calls = new HostedCalls({ db, runner, sealer, logs, logger });
  const deployer = new Deployer({ db, clock, logger, runner, calls, switched: deps.switched });
  return {
    runner,
    calls,
    deployer,
    logs,
    sealer,
    async retire(listingId) {
      for (const id of await runningDeploymentIds(db, listingId)) await deployer.stop(id);
    },
    async recover() {
      const failed = await failInterruptedDeployments(db, clock);
      if (failed > 0) logger.warn({ deployments: failed }, 'deployments interrupted by the last stop were marked failed');
    },
    async close() {
      await logs.flushed();
      await runner.close();
    },
  };
}
