/**
 * Where hosted Workers run: one interface, two runners chosen by `MARKETPLACE_HOSTED_RUNNER` (workerd-runner.ts on
 * this machine, cloudflare-runner.ts on Workers for Platforms). A runner knows nothing of listings or money: it is
 * handed built deployments, answers calls to them, and forgets them.
 */
export interface RunnableDeployment {
  id: string;
  /** The bundle (hosting/build.ts): one ES module. */
  bundle: string;
  /** WebAssembly modules beside it, base64, named as the bundle imports them. */
  wasm: Array<{ name: string; content: string }>;
  /** Its bindings, secrets opened: all the environment the Worker gets. */
  env: Record<string, string>;
  /** Which of `env` are secrets (Cloudflare stores them as secret_text). */
  secretNames: string[];
  egressAllowlist: string[];
  compatibilityDate: string;
}

export interface WorkerLogLine {
  at: number;
  level: string;
  message: string;
}

/** What a call came to, unwrapped from the wrapper's envelope (worker-wrapper.ts). */
export interface HostedAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
  logs: WorkerLogLine[];
  dropped: number;
}

/** A phase's failure, with the reason the developer sees. */
export class RunnerError extends Error {
  readonly phase: 'deploy' | 'running';
  constructor(phase: 'deploy' | 'running', message: string) {
    super(message);
    this.name = 'RunnerError';
    this.phase = phase;
  }
}

/** The deployment is not loaded where the call went (a restart, another instance): load it and call again. */
export class UnknownDeployment extends Error {}

export interface HostedRunner {
  readonly kind: 'workerd' | 'cloudflare';
  /** The deploy phase: hands the deployment over (RunnerError 'deploy' when refused). */
  upload(deployment: RunnableDeployment): Promise<void>;
  /** The running phase's check: the Worker's modules loaded and it answered (RunnerError 'running'); the lines they printed. */
  probe(id: string): Promise<WorkerLogLine[]>;
  /** Calls the deployment; UnknownDeployment when this runner does not have it. */
  call(id: string, path: string, init: { bodyText: string; headers: Record<string, string>; timeoutMs: number }): Promise<HostedAnswer>;
  remove(id: string): Promise<void>;
  close(): Promise<void>;
}

/** Reads the wrapper's envelope out of the runner's JSON answer. */
export function unwrapEnvelope(json: unknown): HostedAnswer | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const envelope = json as { status?: unknown; headers?: unknown; body?: unknown; logs?: unknown; dropped?: unknown };
  if (typeof envelope.status !== 'number' || typeof envelope.body !== 'string' || !Array.isArray(envelope.logs)) return undefined;
  let parsed: unknown;
  try {
    parsed = envelope.body === '' ? undefined : JSON.parse(envelope.body);
  } catch {
    parsed = undefined;
  }
  const logs = (envelope.logs as unknown[]).filter(
    (line): line is WorkerLogLine =>
      line !== null && typeof line === 'object' && typeof (line as WorkerLogLine).message === 'string' && typeof (line as WorkerLogLine).at === 'number',
  );
  return {
    status: envelope.status,
    headers: (envelope.headers ?? {}) as Record<string, string>,
    text: envelope.body,
    json: parsed,
    logs,
    dropped: typeof envelope.dropped === 'number' ? envelope.dropped : 0,
  };
}
