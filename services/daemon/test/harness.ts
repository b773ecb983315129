import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Env } from '@platform/kit/config';
import { silentLogger } from '@platform/testkit/databases';
import { type HttpCallInit, httpCall } from '@platform/testkit/http-call';
import { ManualClock } from '@platform/testkit/manual-clock';
import { type ModelScript, type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import type { Logger } from 'pino';
import { type ComposedDaemon, composeDaemon } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';

export { clarification, compiled, gateStep, modelStep, railScript, toolStep } from '@platform/testkit/rail-script';

export const daemonToken = 'test-daemon-token-51d2';
export const startTime = '2026-06-01T09:00:00.000Z';
export const userId = '5f0c7e1a-1111-4222-8333-444455556666';

/** The services a test wants running in processes of their own (the gateway always, in front of the scripted model). */
export type ServiceName = 'gateway' | 'memory' | 'scheduler' | 'settlement' | 'contracts';

export interface Stack {
  model: ScriptedModel;
  services: Partial<Record<ServiceName, ServiceProcess>>;
  /** The settings that point a daemon at this stack. */
  env: Env;
  close(): Promise<void>;
}

/** Transport bearers for the stack: each service demands its own, so the daemon is tested presenting them. */
const tokens = {
  PLATFORM_GATEWAY_TOKEN: `gw-${randomBytes(8).toString('hex')}`,
  MEMORY_MCP_TOKEN: `mem-${randomBytes(8).toString('hex')}`,
  SCHEDULER_TOKEN: `sch-${randomBytes(8).toString('hex')}`,
  LEDGER_TOKEN: `led-${randomBytes(8).toString('hex')}`,
  PLATFORM_CONTRACT_TOKEN: `con-${randomBytes(8).toString('hex')}`,
};

/**
 * Real services, each in its own process (`platform serve <name>` on PGlite in a temporary folder), and the scripted
 * model server in this one. With `gateway: false` the daemon talks to the scripted model directly (the model server
 * speaks the same protocol), for tests about the daemon's own mechanics.
 */
export async function startStack(options: { services?: ServiceName[]; gateway?: boolean; script?: ModelScript } = {}): Promise<Stack> {
  const model = await startScriptedModel(options.script);
  const wanted = new Set(options.services ?? []);
  const useGateway = options.gateway ?? true;
  const starts: Promise<[ServiceName, ServiceProcess]>[] = [];
  const start = (name: ServiceName, env: Record<string, string>) => starts.push(startServiceProcess(name, env).then((service) => [name, service]));
  if (useGateway) start('gateway', { PLATFORM_GATEWAY_TOKEN: tokens.PLATFORM_GATEWAY_TOKEN, GATEWAY_ADMIN_TOKEN: 'gw-admin', GATEWAY_UPSTREAM_URL: model.url });
  if (wanted.has('memory')) start('memory', { MEMORY_MCP_TOKEN: tokens.MEMORY_MCP_TOKEN });
  if (wanted.has('scheduler')) start('scheduler', { SCHEDULER_TOKEN: tokens.SCHEDULER_TOKEN, SCHEDULER_DISPATCHER: 'false' });
  if (wanted.has('settlement')) start('settlement', { LEDGER_TOKEN: tokens.LEDGER_TOKEN, SETTLEMENT_DEV: 'true' });
  if (wanted.has('contracts')) start('contracts', { PLATFORM_CONTRACT_TOKEN: tokens.PLATFORM_CONTRACT_TOKEN, CONTRACTS_LOCAL_NODE: 'external' });
  const settled = await Promise.allSettled(starts);
  const services: Partial<Record<ServiceName, ServiceProcess>> = {};
  for (const outcome of settled) if (outcome.status === 'fulfilled') services[outcome.value[0]] = outcome.value[1];
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  const close = async () => {
    await Promise.all(Object.values(services).map((service) => service.stop()));
    await model.close();
  };
  if (failed) {
    await close();
    throw failed.reason;
  }
  const env: Record<string, string> = {
    ...tokens,
    PLATFORM_GATEWAY_URL: useGateway ? `${services.gateway?.url}/v1` : model.url,
    DAEMON_USER_ID: userId,
    PLATFORM_DAEMON_TOKEN: daemonToken,
    DAEMON_MODEL_RETRIES: '0',
  };
  if (services.memory) env.PLATFORM_MEMORY_URL = services.memory.url;
  if (services.scheduler) env.PLATFORM_SCHEDULER_URL = services.scheduler.url;
  if (services.settlement) env.PLATFORM_SETTLEMENT_URL = services.settlement.url;
  if (services.contracts) env.PLATFORM_CONTRACTS_URL = services.contracts.url;
  return { model, services, env, close };
}

export interface TestDaemon {
  url: string;
  daemon: ComposedDaemon;
  clock: ManualClock;
  dataDir: string;
  /** A call with the daemon's bearer (override with `bearer`). */
  call(method: string, path: string, init?: HttpCallInit): ReturnType<typeof httpCall>;
  /** A call that must answer 2xx: its `data`. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever shape the route answers.
  ok(method: string, path: string, body?: unknown): Promise<any>;
  /** Stops the daemon as a shutdown does (drain, close); the data folder stays for a restart. */
  stop(): Promise<void>;
}

/**
 * A daemon in this process on a free port, over `dataDir` (a new temporary folder unless given), with a manual clock.
 * Its agent key is fixed by `seed`, so a restart over the same folder is the same agent.
 */
export async function startDaemon(
  env: Env,
  options: { dataDir?: string; clock?: ManualClock; logger?: Logger; seed?: string; begin?: boolean } = {},
): Promise<TestDaemon> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'daemon-test-'));
  const clock = options.clock ?? new ManualClock(startTime);
  const config = loadConfig({ DATA_DIR: dataDir, DAEMON_AGENT_KEY: options.seed ?? 'ab'.repeat(32), ...env });
  let stopped: Promise<void> | undefined;
  const daemon = await composeDaemon(config, { clock, logger: options.logger ?? silentLogger, requestShutdown: () => void stop() });
  await daemon.app.listen({ host: '127.0.0.1', port: 0 });
  const address = daemon.app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  if (options.begin !== false) await daemon.begin();
  const stop = () => {
    stopped ??= (async () => {
      await daemon.app.close();
      await daemon.release();
    })();
    return stopped;
  };
  const call = (method: string, path: string, init: HttpCallInit = {}) => httpCall(url, method, path, { bearer: daemonToken, ...init });
  return {
    url,
    daemon,
    clock,
    dataDir,
    call,
    async ok(method, path, body) {
      const answer = await call(method, path, body === undefined ? {} : { body });
      if (answer.status < 200 || answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
      return answer.json.data;
    },
    stop,
  };
}

export function removeFolder(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
