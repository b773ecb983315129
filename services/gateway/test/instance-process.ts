import { fileURLToPath } from 'node:url';
import type { Env } from '@platform/kit/config';
import type { OpenDatabaseOptions } from '@platform/kit/db/open-database';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { startGateway } from './harness.ts';

/*
 * A gateway instance in a process of its own, on the data of another (PostgreSQL), with its own manual clock: what
 * a test kills with SIGKILL to see what a crashed instance leaves behind.
 */

interface Args {
  attach: Omit<OpenDatabaseOptions, 'logger'>;
  env: Env;
}

export type InstanceProcess = Child<Record<string, never>, { url: string }>;

export function startInstanceProcess(args: Args): Promise<InstanceProcess> {
  return forkChild(fileURLToPath(import.meta.url), args);
}

if (import.meta.main) {
  const args = JSON.parse(process.argv[2] ?? '{}') as Args;
  const [engine] = testEngines();
  if (!engine) throw new Error('no test engine');
  const gateway = await startGateway(engine, { attach: { ...args.attach, logger: silentLogger }, env: args.env });
  serveChild({}, { url: gateway.url });
}
