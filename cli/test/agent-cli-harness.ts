import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StartedService, StartService } from '@platform/kit/lifecycle';
import { type CommandRun, runPlatform } from '@platform/testkit/run-command';

/*
 * What the agent CLI's tests share: the command run as a child process, with a home folder of its own (so the
 * default key path never touches the real one), and services started in this process on free ports.
 */

export type Run = CommandRun;

/** A temporary folder, removed by `remove`. */
export function tempFolder(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Runs `platform <args>` with only PATH, the given HOME and `env`; resolves with its exit code and output. */
export function platform(args: readonly string[], home: string, env: Record<string, string> = {}): Promise<Run> {
  return runPlatform(args, { env: { HOME: home, ...env } });
}

/** Parses `--json` output; fails the test with the output when it is not one JSON document. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read the service's JSON as it comes.
export function json(run: Run): any {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`not JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
}

/** A failure's stderr: exactly one line, which the caller matches. */
export function oneLine(run: Run): string {
  const lines = run.stderr.trimEnd().split('\n');
  if (lines.length !== 1) throw new Error(`expected one line on stderr, got ${lines.length}:\n${run.stderr}`);
  return lines[0] as string;
}

/** Starts a service in this process on a free port with its data in a temporary folder; `stop` stops it and removes the folder. */
export async function startInProcess(load: () => Promise<{ start: StartService }>, env: Record<string, string>): Promise<StartedService> {
  const data = tempFolder('agent-cli-service-');
  const { start } = await load();
  const service = await start({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: data.path, ...env }, { handleSignals: false });
  return {
    ...service,
    stop: async () => {
      await service.stop();
      data.remove();
    },
  };
}
