import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { testRunSettings } from './child-env.ts';

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The `platform` command's entry (cli/bin/platform.js): tests run it as a person would, in a child process. */
export const platformBin = join(import.meta.dirname, '..', '..', '..', 'cli', 'bin', 'platform.js');

/**
 * Runs `platform <args>` to its end under this Node, with PATH and exactly `env` (nothing else inherited, so no
 * setting of the test's leaks in) and `input` on stdin; resolves with the exit code and the whole output.
 *
 * @example const run = await runPlatform(['secret', 'PLATFORM_DAEMON_TOKEN'], { env: { DATA_DIR: dir } })
 */
export async function runPlatform(args: readonly string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CommandRun> {
  const child = spawn(process.execPath, [platformBin, ...args], {
    env: { PATH: process.env.PATH ?? '', ...testRunSettings(), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  child.stdin.end(options.input ?? '');
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}
