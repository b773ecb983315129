import { fileURLToPath } from 'node:url';
import type { Env } from '@platform/kit/config';
import type { StartedService } from '@platform/kit/lifecycle';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';

/* The gateway exactly as `node src/main.ts` runs it (start() with an env), in its own process. */

let service: StartedService | undefined;

const handlers = {
  /** CPU time of the whole gateway process so far, in µs. */
  cpu: () => process.cpuUsage(),
  stop: async () => {
    await service?.stop();
    setImmediate(() => process.exit(0));
  },
};

export type GatewayProcess = Child<typeof handlers, { url: string; pid: number }>;

/** `execArgv` adds node flags, such as --cpu-prof for BENCH_PROFILE. */
export function startGatewayProcess(env: Env, execArgv: string[] = []): Promise<GatewayProcess> {
  return forkChild(fileURLToPath(import.meta.url), env, execArgv);
}

if (import.meta.main) {
  const { start } = await import('../src/main.ts');
  service = await start(JSON.parse(process.argv[2] ?? '{}') as Env, { handleSignals: false });
  serveChild(handlers, { url: service.url, pid: process.pid });
}
