import { type JsonAnswer, type JsonClient, JsonClientError } from '@platform/kit/http/json-client';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { HostedDeploymentTable, MarketplaceSchema, StoredBinding } from '../db/schema.ts';
import { deploymentById, findArtifact } from './hosting.repository.ts';
import type { LogBook } from './log-book.ts';
import { type HostedRunner, type RunnableDeployment, UnknownDeployment, type WorkerLogLine } from './runner.ts';
import type { SecretSealer } from './secrets.ts';

/** A hosted listing's calls go to `hosted://<deployment id>`: the provider protocol, served by the runner. */
export const hostedEndpoint = (deploymentId: string | null | undefined) => `hosted://${deploymentId ?? 'none'}`;

interface Loaded {
  listingId: string;
  /** Secret values, replaced in the Worker's log lines: a secret the code prints is not kept in the marketplace's logs. */
  secrets: string[];
}

/**
 * Calls to hosted Workers, behind the JSON client interface the provider call already uses (payments/provider-call.ts
 * is the same for both kinds of listing: the same signed body, timeout and checks of the answer). A deployment this
 * process's runner does not have (after a restart, on another instance, or removed while a call raced a switch) is
 * loaded from its stored bundle first, once however many calls ask. Log lines that come back with an answer go to
 * the log book, off the call's path. Calls in flight are counted, so a replaced deployment is removed only once its
 * last call has finished.
 */
export class HostedCalls {
  readonly #db: Kysely<MarketplaceSchema>;
  readonly #runner: HostedRunner;
  readonly #sealer: SecretSealer;
  readonly #logs: LogBook;
  readonly #logger: Logger;
  readonly #loaded = new Map<string, Promise<Loaded>>();
  readonly #inFlight = new Map<string, number>();
  readonly #drainWaiters = new Map<string, Array<() => void>>();
  readonly client: JsonClient;

  constructor(options: { db: Kysely<MarketplaceSchema>; runner: HostedRunner; sealer: SecretSealer; logs: LogBook; logger: Logger }) {
    this.#db = options.db;
    this.#runner = options.runner;
    this.#sealer = options.sealer;
    this.#logs = options.logs;
    this.#logger = options.logger;
    this.client = { request: (method, url, init) => this.#request(method, url, init ?? {}), close: async () => undefined };
  }

  /** The deployment as the runner takes it: the bundle, its WebAssembly, its bindings opened. */
  async runnable(deployment: HostedDeploymentTable): Promise<RunnableDeployment> {
    const artifact = await findArtifact(this.#db, deployment.listing_id, deployment.artifact_id);
    if (!artifact || deployment.bundle === null) throw new Error(`deployment ${deployment.id} has no artifact or bundle`);
    return {
      id: deployment.id,
      bundle: deployment.bundle,
      wasm: artifact.modules.filter((module) => module.type === 'wasm').map((module) => ({ name: module.name, content: module.content })),
      env: this.#environment(deployment.bindings),
      secretNames: deployment.bindings.filter((binding) => binding.type === 'secret_text').map((binding) => binding.name),
      egressAllowlist: artifact.egress_allowlist,
      compatibilityDate: artifact.compatibility_date,
    };
  }

  /** Marks a deployment the runner has just taken (the deployer's own upload). */
  loaded(deployment: HostedDeploymentTable): void {
    this.#loaded.set(deployment.id, Promise.resolve(this.#loadedOf(deployment)));
  }

  async remove(deploymentId: string): Promise<void> {
    await this.drained(deploymentId);
    this.#loaded.delete(deploymentId);
    await this.#runner
      .remove(deploymentId)
      .catch((error) => this.#logger.warn({ err: error, deployment: deploymentId }, 'removing a deployment from the runner failed'));
  }

  /** Resolves once no call of this process is on the deployment. */
  drained(deploymentId: string): Promise<void> {
    if ((this.#inFlight.get(deploymentId) ?? 0) === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.#drainWaiters.get(deploymentId) ?? [];
      waiters.push(resolve);
      this.#drainWaiters.set(deploymentId, waiters);
    });
  }

  /** Keeps a deployment's lines (the probe's, a call's), secrets replaced, times the Worker could not tell filled in. */
  record(deploymentId: string, listingId: string, invocationId: string | null, lines: WorkerLogLine[], dropped: number, secrets: readonly string[] = []): void {
    const now = Date.now();
    const rows = lines.map((line) => ({
      listing_id: listingId,
      deployment_id: deploymentId,
      invocation_id: invocationId,
      level: ['debug', 'info', 'warn', 'error'].includes(line.level) ? line.level : 'info',
      message: redact(line.message, secrets),
      // Workers see a clock that stands still outside a request (0 while their modules load).
      at: new Date(line.at > 0 ? line.at : now),
    }));
    if (dropped > 0)
      rows.push({
        listing_id: listingId,
        deployment_id: deploymentId,
        invocation_id: invocationId,
        level: 'warn',
        message: `${dropped} more line(s) of this call were dropped (at most 256 a call)`,
        at: new Date(now),
      });
    this.#logs.add(rows);
  }

  secretsOf(bindings: StoredBinding[]): string[] {
    return bindings.flatMap((binding) => (binding.type === 'secret_text' ? [this.#sealer.open(binding.sealed)] : []));
  }

  // Every provider call is a POST, which the runner sends.
  async #request(_method: string, url: string | URL, init: { headers?: Record<string, string>; bodyText?: string; timeoutMs?: number }): Promise<JsonAnswer> {
    const target = typeof url === 'string' ? new URL(url) : url;
    const id = target.hostname;
    if (id === 'none') throw new JsonClientError('network', 'this hosted listing has no running deployment');
    this.#inFlight.set(id, (this.#inFlight.get(id) ?? 0) + 1);
    try {
      const call = { bodyText: init.bodyText ?? '', headers: init.headers ?? {}, timeoutMs: init.timeoutMs ?? 30_000 };
      let loaded = await this.#load(id);
      let answer: Awaited<ReturnType<HostedRunner['call']>>;
      try {
        answer = await this.#runner.call(id, `${target.pathname}${target.search}`, call);
      } catch (error) {
        if (!(error instanceof UnknownDeployment)) throw error;
        this.#loaded.delete(id);
        loaded = await this.#load(id);
        answer = await this.#runner.call(id, `${target.pathname}${target.search}`, call);
      }
      this.record(id, loaded.listingId, call.headers['x-marketplace-invocation'] ?? null, answer.logs, answer.dropped, loaded.secrets);
      return { status: answer.status, headers: answer.headers, json: answer.json, text: answer.text };
    } finally {
      const left = (this.#inFlight.get(id) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(id, left);
      else {
        this.#inFlight.delete(id);
        for (const resolve of this.#drainWaiters.get(id) ?? []) resolve();
        this.#drainWaiters.delete(id);
      }
    }
  }

  #load(id: string): Promise<Loaded> {
    let loading = this.#loaded.get(id);
    if (!loading) {
      loading = (async () => {
        const deployment = await deploymentById(this.#db, id);
        if (!deployment || deployment.bundle === null) throw new JsonClientError('network', `deployment ${id} cannot be loaded`);
        await this.#runner.upload(await this.runnable(deployment));
        return this.#loadedOf(deployment);
      })();
      loading.catch(() => this.#loaded.delete(id));
      this.#loaded.set(id, loading);
    }
    return loading;
  }

  #loadedOf(deployment: HostedDeploymentTable): Loaded {
    return { listingId: deployment.listing_id, secrets: this.secretsOf(deployment.bindings) };
  }

  #environment(bindings: StoredBinding[]): Record<string, string> {
    return Object.fromEntries(bindings.map((binding) => [binding.name, binding.type === 'secret_text' ? this.#sealer.open(binding.sealed) : binding.text]));
  }
}

function redact(message: string, secrets: readonly string[]): string {
  let text = message;
  for (const secret of secrets) if (secret.length >= 4) text = text.replaceAll(secret, '[secret]');
  return text;
}
