import { type ChildProcess, fork } from 'node:child_process';
import { bindGroup } from '@platform/kit/bound-children';
import type { Logger } from 'pino';
import type { BuildPayload, TestProcessReply, TestProcessRequest } from './test-process.ts';
import type { SuiteId, SuiteReport } from './test-report.ts';

/** A test run that overran its limit: the test process was killed (a fresh one starts with the next run). */
export class TestTimeoutError extends Error {
  constructor(ms: number) {
    super(`tests ran longer than ${ms} ms`);
    this.name = 'TestTimeoutError';
  }
}

/** The runner refused the project (bad inline config, an unsupported feature): the caller's problem, not ours. */
export class TestRunnerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TestRunnerError';
  }
}

export interface TestRun {
  buildHash: string;
  build: () => BuildPayload;
  suites: SuiteId[];
  testPattern: string | undefined;
  fuzzRuns: number;
}

interface Running {
  child: ChildProcess;
  ready: Promise<void>;
  /** Builds this child was sent (it may have dropped some since; it says so and we send again). */
  sent: Set<string>;
}

/**
 * The engine's side of the test process: started once and kept warm, one run at a time (EDR already spreads a run
 * over every core), killed and replaced when a run overruns `timeoutMs` or the process dies.
 */
export class TestProcessClient {
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  #running: Running | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #closed = false;

  constructor(options: { timeoutMs: number; logger: Logger }) {
    this.#timeoutMs = options.timeoutMs;
    this.#logger = options.logger;
  }

  /** Starts the process and waits until EDR is loaded, so the first run does not pay for it. */
  async warm(): Promise<void> {
    await this.#process().ready;
  }

  run(run: TestRun): Promise<SuiteReport[]> {
    const result = this.#queue.then(() => this.#runNow(run));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#running?.child.kill('SIGKILL');
    this.#running = undefined;
  }

  async #runNow(run: TestRun): Promise<SuiteReport[]> {
    const running = this.#process();
    await running.ready;
    const first = await this.#send(running, run, !running.sent.has(run.buildHash));
    if (first.ok || !first.unknownBuild) return this.#unwrap(first);
    return this.#unwrap(await this.#send(running, run, true));
  }

  #unwrap(reply: Extract<TestProcessReply, { id: number }>): SuiteReport[] {
    if (reply.ok) return reply.value;
    throw new TestRunnerError(reply.message);
  }

  #send(running: Running, run: TestRun, withBuild: boolean): Promise<Extract<TestProcessReply, { id: number }>> {
    const id = this.#nextId++;
    const request: TestProcessRequest = {
      id,
      buildHash: run.buildHash,
      build: withBuild ? run.build() : undefined,
      suites: run.suites,
      testPattern: run.testPattern,
      fuzzRuns: run.fuzzRuns,
    };
    if (withBuild) running.sent.add(run.buildHash);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        this.#kill(running);
        reject(new TestTimeoutError(this.#timeoutMs));
      }, this.#timeoutMs);
      const onMessage = (reply: TestProcessReply) => {
        if ('id' in reply && reply.id === id) {
          cleanup();
          resolve(reply);
        }
      };
      const onExit = (code: number | null, signal: string | null) => {
        cleanup();
        reject(new Error(`test process exited (${signal ?? code}) during a run`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        running.child.off('message', onMessage);
        running.child.off('exit', onExit);
      };
      running.child.on('message', onMessage);
      running.child.on('exit', onExit);
      running.child.send(request);
    });
  }

  #process(): Running {
    if (this.#closed) throw new Error('test runner closed');
    if (this.#running && this.#running.child.exitCode === null && this.#running.child.signalCode === null) return this.#running;
    // An empty environment: cheatcodes such as vm.envString must find nothing of the engine's secrets.
    const child = fork(new URL('./test-process.ts', import.meta.url), [], {
      env: {},
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // Its own process group: a Ctrl-C meant for the engine's group must not end a run in flight before the engine
      // stops in its turn (close); bound, it never outlives the engine's process.
      detached: true,
    });
    bindGroup(child);
    child.stderr?.on('data', (chunk: Buffer) => this.#logger.warn({ output: chunk.toString('utf8').slice(0, 2000) }, 'test process wrote to stderr'));
    child.on('exit', (code, signal) => {
      if (!this.#closed) this.#logger.info({ code, signal }, 'test process exited');
      if (this.#running?.child === child) this.#running = undefined;
    });
    child.unref();
    child.channel?.unref();
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (message: TestProcessReply) => {
        if ('ready' in message) {
          child.off('message', onMessage);
          resolve();
        }
      };
      child.on('message', onMessage);
      child.once('exit', () => reject(new Error('test process exited before it was ready')));
      child.once('error', reject);
    });
    ready.catch(() => undefined);
    this.#running = { child, ready, sent: new Set() };
    return this.#running;
  }

  #kill(running: Running): void {
    running.child.kill('SIGKILL');
    if (this.#running === running) this.#running = undefined;
  }
}
