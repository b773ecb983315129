import type { Clock } from '@platform/kit/clock';
import { uuidv7 } from '@platform/kit/ids';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { HostedArtifactTable, HostedDeploymentTable, MarketplaceSchema, StoredBinding } from '../db/schema.ts';
import { buildDeployment } from './build.ts';
import type { HostedCalls } from './hosted-calls.ts';
import { deploymentById, insertDeployment, switchCurrentDeployment, updateDeployment } from './hosting.repository.ts';
import { type HostedRunner, RunnerError } from './runner.ts';

export interface DeployRequest {
  listingId: string;
  artifact: HostedArtifactTable;
  bindings: StoredBinding[];
  /** A rollback: the earlier deployment whose bundle runs again (no build). */
  from?: HostedDeploymentTable;
}

/**
 * A deployment's three phases: build (validate and bundle, hosting/build.ts), deploy (hand it to the runner) and
 * running (it answered the readiness probe); a failure stops it in its phase with the reason. Only once running does
 * it take the listing's calls (listings.hosted_deployment_id); the deployment it replaced is stopped and leaves the
 * runner when its last call in flight has finished, so no call is dropped by a change.
 */
export class Deployer {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #runner: HostedRunner;
  readonly #calls: HostedCalls;
  readonly #switched: (listingId: string) => void;

  constructor(options: {
    db: Kysely<MarketplaceSchema>;
    clock: Clock;
    logger: Logger;
    runner: HostedRunner;
    calls: HostedCalls;
    switched: (listingId: string) => void;
  }) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#runner = options.runner;
    this.#calls = options.calls;
    this.#switched = options.switched;
  }

  async deploy(request: DeployRequest): Promise<HostedDeploymentTable> {
    const now = () => this.#clock.now();
    const deployment: HostedDeploymentTable = {
      id: uuidv7(),
      listing_id: request.listingId,
      artifact_id: request.artifact.id,
      runner: this.#runner.kind,
      status: 'build',
      failed_phase: null,
      failure: null,
      bindings: request.bindings,
      bundle: null,
      created_at: now(),
      build_started_at: now(),
      build_finished_at: null,
      deploy_started_at: null,
      deploy_finished_at: null,
      running_at: null,
      stopped_at: null,
      rollback_of: request.from?.id ?? null,
    };
    if (request.from) {
      deployment.bundle = request.from.bundle;
      deployment.build_finished_at = now();
      deployment.status = 'deploy';
      deployment.deploy_started_at = now();
    }
    await insertDeployment(this.#db, deployment);
    const fail = async (phase: 'build' | 'deploy' | 'running', reason: string) => {
      Object.assign(deployment, { status: 'failed', failed_phase: phase, failure: reason, stopped_at: now() });
      await updateDeployment(this.#db, deployment.id, { status: 'failed', failed_phase: phase, failure: reason, stopped_at: deployment.stopped_at });
      return deployment;
    };
    if (!request.from) {
      const built = await buildDeployment(request.artifact);
      if (!built.ok) return fail('build', built.reason);
      Object.assign(deployment, { bundle: built.bundle, build_finished_at: now(), status: 'deploy', deploy_started_at: now() });
      await updateDeployment(this.#db, deployment.id, {
        bundle: built.bundle,
        build_finished_at: deployment.build_finished_at,
        status: 'deploy',
        deploy_started_at: deployment.deploy_started_at,
      });
    }
    try {
      await this.#runner.upload(await this.#calls.runnable(deployment));
      deployment.deploy_finished_at = now();
      await updateDeployment(this.#db, deployment.id, { deploy_finished_at: deployment.deploy_finished_at });
      const lines = await this.#runner.probe(deployment.id);
      this.#calls.record(deployment.id, deployment.listing_id, null, lines, 0, this.#calls.secretsOf(deployment.bindings));
    } catch (error) {
      if (!(error instanceof RunnerError)) throw error;
      await this.#runner.remove(deployment.id).catch(() => undefined);
      return fail(error.phase, error.message);
    }
    this.#calls.loaded(deployment);
    Object.assign(deployment, { status: 'running', running_at: now() });
    await updateDeployment(this.#db, deployment.id, { status: 'running', running_at: deployment.running_at });
    const { switched, previous } = await switchCurrentDeployment(this.#db, deployment.listing_id, deployment.id);
    this.#switched(deployment.listing_id);
    const replaced = switched ? previous : deployment.id;
    if (replaced !== null && replaced !== undefined) await this.stop(replaced, switched ? deployment.id : undefined);
    if (!switched) return (await deploymentById(this.#db, deployment.id)) ?? deployment;
    return deployment;
  }

  /** Marks a deployment stopped and removes it from the runner once its calls in flight have finished (not awaited). */
  async stop(deploymentId: string, replacedBy?: string): Promise<void> {
    await updateDeployment(this.#db, deploymentId, { status: 'stopped', stopped_at: this.#clock.now() });
    this.#calls.remove(deploymentId).then(
      () => this.#logger.info({ deployment: deploymentId, replaced_by: replacedBy }, 'hosted deployment stopped'),
      (error) => this.#logger.warn({ err: error, deployment: deploymentId }, 'stopping a hosted deployment failed'),
    );
  }
}
