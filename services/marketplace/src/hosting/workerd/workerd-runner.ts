import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBound } from '@platform/kit/bound-children';
import { freePort } from '@platform/kit/free-port';
import { createJsonClient, JsonClientError } from '@platform/kit/http/json-client';
import type { Logger } from 'pino';
import {
  type HostedAnswer,
  type HostedRunner,
  type RunnableDeployment,
  RunnerError,
  UnknownDeployment,
  unwrapEnvelope,
  type WorkerLogLine,
} from '../runner.ts';
import { hostWorkerSource, workerdConfig } from './host-worker.ts';

/** How long workerd has to listen after it was started (it compiles nothing of ours at start). */
const startTimeoutMs = 15_000;
const probeTimeoutMs = 10_000;
/** How long workerd has to exit on SIGTERM before it is killed. */
const stopGraceMs = 1000;

/** The workerd binary of the npm package (its platform package's, e.g. @cloudflare/workerd-linux-64). */
const workerdBinary: string = (createRequire(import.meta.url)('workerd') as { default: string }).default;

/**
 * The local runner: one workerd process (Cloudflare's open-source runtime, the npm package `workerd`) serving every
 * deployment, each in an isolate of its own (host-worker.ts). Started on the first deployment or call, bound to this
 * process (kit bound-children: it never outlives it), restarted when it dies, and stopped on close.
 */
export class WorkerdRunner implements HostedRunner {
  readonly kind = 'workerd';
  readonly #logger: Logger;
  readonly #allowPrivate: boolean;
  readonly #token = randomBytes(32).toString('base64url');
  readonly #client = createJsonClient({ maxSockets: 512, timeoutMs: 30_000, maxAnswerBytes: 8 * 1024 * 1024 });
  #process: Promise<{ child: ChildProcess; base: string; folder: string }> | undefined;
  #closing = false;

  constructor(options: { logger: Logger; allowPrivate: boolean }) {
    this.#logger = options.logger;
    this.#allowPrivate = options.allowPrivate;
  }

  async upload(deployment: RunnableDeployment): Promise<void> {
    const { id, ...rest } = deployment;
    const answer = await this.#request('PUT', `/_platform/deployments/${id}`, { bodyText: JSON.stringify(rest), timeoutMs: probeTimeoutMs }).catch(
      (error: Error) => {
        throw new RunnerError('deploy', `workerd did not take the deployment: ${error.message}`);
      },
    );
    if (answer.status !== 200) throw new RunnerError('deploy', `workerd refused the deployment (${answer.status}): ${answer.text.slice(0, 500)}`);
  }

  async probe(id: string): Promise<WorkerLogLine[]> {
    const answer = await this.#request('GET', `/_platform/probe/${id}/`, { timeoutMs: probeTimeoutMs }).catch((error: Error) => {
      throw new RunnerError('running', `the readiness probe got no answer: ${error.message}`);
    });
    if (answer.status === 502)
      throw new RunnerError('running', `the Worker did not load: ${String((answer.json as { message?: string })?.message ?? answer.text).slice(0, 2000)}`);
    const unwrapped = unwrapEnvelope(answer.json);
    if (answer.status !== 200 || !unwrapped)
      throw new RunnerError('running', `the readiness probe was answered ${answer.status}: ${answer.text.slice(0, 500)}`);
    return unwrapped.logs;
  }

  async call(id: string, path: string, init: { bodyText: string; headers: Record<string, string>; timeoutMs: number }): Promise<HostedAnswer> {
    const answer = await this.#request('POST', `/_platform/call/${id}${path}`, init);
    if (answer.status === 404 && (answer.json as { error?: string })?.error === 'unknown_deployment') throw new UnknownDeployment(id);
    const unwrapped = unwrapEnvelope(answer.json);
    if (!unwrapped) {
      const message = String((answer.json as { message?: string })?.message ?? answer.text).slice(0, 2000);
      return {
        status: 502,
        headers: {},
        text: '',
        json: undefined,
        logs: [{ at: Date.now(), level: 'error', message: `the Worker could not serve the call: ${message}` }],
        dropped: 0,
      };
    }
    return unwrapped;
  }

  async remove(id: string): Promise<void> {
    if (!this.#process) return;
    await this.#request('DELETE', `/_platform/deployments/${id}`, { timeoutMs: probeTimeoutMs });
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#client.close();
    const running = await this.#process?.catch(() => undefined);
    if (!running) return;
    if (running.child.exitCode === null && running.child.signalCode === null) {
      const exited = new Promise((resolve) => running.child.once('exit', resolve));
      running.child.kill('SIGTERM');
      // workerd drains requests a cut-off call left running in its isolates (a Worker's timers); the marketplace has
      // already answered every call it will, so nothing is lost by not waiting for them.
      const kill = setTimeout(() => running.child.kill('SIGKILL'), stopGraceMs);
      await exited;
      clearTimeout(kill);
    }
    await rm(running.folder, { recursive: true, force: true });
  }

  /** The process's pid once started (tests check it is gone after close). */
  async pid(): Promise<number | undefined> {
    return (await this.#process)?.child.pid;
  }

  async #request(method: string, path: string, init: { bodyText?: string; headers?: Record<string, string>; timeoutMs: number }) {
    const { base } = await this.#started();
    return this.#client.request(method, `${base}${path}`, {
      ...(init.bodyText === undefined ? {} : { bodyText: init.bodyText }),
      timeoutMs: init.timeoutMs,
      headers: { ...init.headers, 'x-platform-host-token': this.#token },
    });
  }

  #started() {
    if (this.#closing) return Promise.reject(new JsonClientError('network', 'the workerd runner is closing'));
    this.#process ??= this.#start().catch((error) => {
      this.#process = undefined;
      throw error;
    });
    return this.#process;
  }

  async #start() {
    const folder = await mkdtemp(join(tmpdir(), 'marketplace-workerd-'));
    const port = await freePort();
    await writeFile(join(folder, 'host.js'), hostWorkerSource());
    await writeFile(join(folder, 'config.capnp'), workerdConfig({ port, allowPrivate: this.#allowPrivate }));
    const child = spawnBound(workerdBinary, ['serve', join(folder, 'config.capnp'), '--experimental'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PLATFORM_HOST_TOKEN: this.#token },
    });
    const output: string[] = [];
    const keep = (chunk: Buffer) => {
      output.push(chunk.toString('utf8'));
      if (output.length > 50) output.shift();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', (code, signal) => {
      if (this.#closing) return;
      // Deployments are loaded again, from their bundles, by the next call to each (UnknownDeployment).
      this.#logger.error({ code, signal, output: output.join('').slice(-2000) }, 'workerd exited; it is started again on the next call');
      this.#process = undefined;
    });
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`workerd did not start: ${output.join('').slice(-2000)}`);
      const answer = await this.#client.request('GET', `${base}/_platform/ping/x`, { timeoutMs: 1000 }).catch(() => undefined);
      if (answer) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`workerd did not listen within ${startTimeoutMs} ms: ${output.join('').slice(-2000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.#logger.info({ pid: child.pid, port }, 'workerd started for hosted workers');
    return { child, base, folder };
  }
}
