import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@platform/kit/free-port';
import { cleanEnv, limitMs, platform, runToExit, waitForLine, within } from '../../../cli/test/platform-process.ts';

/** `up` starts ten services at once; on a 2-core machine shared by several test runs it has taken up to ~100 s. */
const upLimitMs = 180_000;

/*
 * `platform up` as a child process for the console's browser tests: one small file, to be swapped for the testkit's
 * reusable start (being moved there from cli/test/platform-process.ts, which it uses meanwhile) at merge.
 */

export interface RunningPlatform {
  /** A service's URL from the ready table, by name (`router`, `settlement`, …). */
  url(name: string): string;
  dataDir: string;
  /** Runs another `platform` command against the same data folder (`secret LEDGER_TOKEN`, `token`). */
  run(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** Starts the whole platform on free ports in a fresh folder, with its own local chain port and `extra` settings. */
export async function startPlatform(extra: Record<string, string>): Promise<RunningPlatform> {
  const dataDir = await mkdtemp(join(tmpdir(), 'console-platform-'));
  // Its own chain port: the contract engine adopts a node it finds answering, and other tests run `up` too.
  const env = cleanEnv({ DATA_DIR: dataDir, PORT: '0', CONTRACTS_LOCAL_RPC_URL: `http://127.0.0.1:${await freePort()}`, ...extra });
  const child: ChildProcess = platform(['up'], env);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit');
  const stdout: string[] = [];
  await within(waitForLine(child, /npx platform delegate/, stdout), upLimitMs, 'platform up').catch(async (error: Error) => {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    throw new Error(`${error.message}\n${stdout.join('\n')}\n${stderr}`);
  });
  const url = (name: string) => (stdout.find((line) => line.startsWith(`${name} `)) ?? '').split(/\s{2,}/)[1] as string;
  return {
    url,
    dataDir,
    async run(args) {
      const result = await runToExit(args, cleanEnv({ DATA_DIR: dataDir }));
      if (result.code !== 0) throw new Error(`platform ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
      return result.stdout.trim();
    },
    async stop() {
      child.kill('SIGTERM');
      await within(exited, limitMs, 'platform up to stop').finally(() => child.kill('SIGKILL'));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
