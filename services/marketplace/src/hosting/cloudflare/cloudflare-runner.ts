import { createJsonClient } from '@platform/kit/http/json-client';
import { tracedFetch } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import { bundleModuleName } from '../build.ts';
import {
  type HostedAnswer,
  type HostedRunner,
  type RunnableDeployment,
  RunnerError,
  UnknownDeployment,
  unwrapEnvelope,
  type WorkerLogLine,
} from '../runner.ts';
import { probeHeader } from '../worker-wrapper.ts';

/** The header the operator's dispatch Worker reads a call's egress allowlist from (JSON array of host names). */
export const egressHeader = 'x-platform-egress';
const requestTimeoutMs = 30_000;

/**
 * Workers for Platforms: each deployment is a script in the operator's dispatch namespace, uploaded over the
 * Cloudflare API as the same multipart upload a developer sends us (a `metadata` part naming the main module, its
 * compatibility date, `nodejs_compat`, plain-text and secret bindings; one part per module), and deleted when it is
 * replaced or its listing delisted. Calls go to the operator's dispatch Worker (`<dispatch url>/<script>/<path>`),
 * which runs the script with an outbound Worker given the allowlist this runner sends with each call.
 */
export class CloudflareRunner implements HostedRunner {
  readonly kind = 'cloudflare';
  readonly #options: { apiUrl: string; accountId: string; namespace: string; apiToken: string; dispatchUrl: string; dispatchToken: string; logger: Logger };
  readonly #client = createJsonClient({ maxSockets: 256, timeoutMs: requestTimeoutMs, maxAnswerBytes: 8 * 1024 * 1024 });
  /** Allowlists of the scripts this process uploaded; after a restart a deployment is uploaded again on its first call. */
  readonly #allowlists = new Map<string, string[]>();

  constructor(options: { apiUrl: string; accountId: string; namespace: string; apiToken: string; dispatchUrl: string; dispatchToken: string; logger: Logger }) {
    this.#options = options;
  }

  #scriptUrl(id: string): string {
    const { apiUrl, accountId, namespace } = this.#options;
    return `${apiUrl.replace(/\/+$/, '')}/accounts/${encodeURIComponent(accountId)}/workers/dispatch/namespaces/${encodeURIComponent(namespace)}/scripts/${scriptName(id)}`;
  }

  async upload(deployment: RunnableDeployment): Promise<void> {
    const form = new FormData();
    const bindings = Object.entries(deployment.env).map(([name, text]) => ({
      type: deployment.secretNames.includes(name) ? 'secret_text' : 'plain_text',
      name,
      text,
    }));
    form.set(
      'metadata',
      new Blob(
        [JSON.stringify({ main_module: bundleModuleName, compatibility_date: deployment.compatibilityDate, compatibility_flags: ['nodejs_compat'], bindings })],
        {
          type: 'application/json',
        },
      ),
    );
    form.set(bundleModuleName, new Blob([deployment.bundle], { type: 'application/javascript+module' }), bundleModuleName);
    for (const module of deployment.wasm) form.set(module.name, new Blob([Buffer.from(module.content, 'base64')], { type: 'application/wasm' }), module.name);
    let answer: Response;
    try {
      // fetch builds the multipart body; the JSON client speaks JSON only. The API is called once per deployment, not per call.
      answer = await tracedFetch(this.#scriptUrl(deployment.id), {
        method: 'PUT',
        headers: { authorization: `Bearer ${this.#options.apiToken}` },
        body: form,
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
    } catch (error) {
      throw new RunnerError('deploy', `the Cloudflare API could not be reached: ${(error as Error).message}`);
    }
    const body = (await answer.json().catch(() => ({}))) as { success?: boolean; errors?: Array<{ message?: string }> };
    if (!answer.ok || body.success !== true)
      throw new RunnerError(
        'deploy',
        `the Cloudflare API refused the script (${answer.status}): ${(body.errors ?? []).map((error) => error.message).join('; ') || 'no reason given'}`,
      );
    this.#allowlists.set(deployment.id, deployment.egressAllowlist);
  }

  async probe(id: string): Promise<WorkerLogLine[]> {
    const answer = await this.#dispatch('GET', id, '/', { headers: { [probeHeader]: '1' }, timeoutMs: requestTimeoutMs }).catch((error: Error) => {
      throw new RunnerError('running', `the readiness probe got no answer: ${error.message}`);
    });
    const unwrapped = unwrapEnvelope(answer.json);
    if (answer.status !== 200 || !unwrapped)
      throw new RunnerError('running', `the readiness probe was answered ${answer.status}: ${answer.text.slice(0, 1000)}`);
    return unwrapped.logs;
  }

  async call(id: string, path: string, init: { bodyText: string; headers: Record<string, string>; timeoutMs: number }): Promise<HostedAnswer> {
    if (!this.#allowlists.has(id)) throw new UnknownDeployment(id);
    const answer = await this.#dispatch('POST', id, path, init);
    const unwrapped = unwrapEnvelope(answer.json);
    if (unwrapped) return unwrapped;
    return {
      status: 502,
      headers: {},
      text: '',
      json: undefined,
      logs: [{ at: Date.now(), level: 'error', message: `the dispatch Worker answered ${answer.status}: ${answer.text.slice(0, 500)}` }],
      dropped: 0,
    };
  }

  async remove(id: string): Promise<void> {
    this.#allowlists.delete(id);
    const answer = await tracedFetch(this.#scriptUrl(id), {
      method: 'DELETE',
      headers: { authorization: `Bearer ${this.#options.apiToken}` },
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    if (!answer.ok && answer.status !== 404)
      this.#options.logger.warn({ deployment: id, status: answer.status }, 'deleting a script from the dispatch namespace failed');
  }

  async close(): Promise<void> {
    await this.#client.close();
  }

  #dispatch(method: string, id: string, path: string, init: { bodyText?: string; headers: Record<string, string>; timeoutMs: number }) {
    return this.#client.request(method, `${this.#options.dispatchUrl.replace(/\/+$/, '')}/${scriptName(id)}${path}`, {
      ...(init.bodyText === undefined ? {} : { bodyText: init.bodyText }),
      timeoutMs: init.timeoutMs,
      headers: { ...init.headers, authorization: `Bearer ${this.#options.dispatchToken}`, [egressHeader]: JSON.stringify(this.#allowlists.get(id) ?? []) },
    });
  }
}

/** Script names are lower case letters, digits and dashes. */
export const scriptName = (deploymentId: string) => `d-${deploymentId.toLowerCase()}`;
