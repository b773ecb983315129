import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { p50 } from '@platform/testkit/stats';
import { bundleEntry, daemonNodeFlags, ensureBundle } from '../scripts/bundle.mjs';

/*
 * Start-to-ready and idle memory of one daemon process, as the router will start one per user: the time from spawn
 * until GET /healthz answers, then the resident set after `idleMs` with nothing to do. RSS counts the node executable's
 * own pages (shared by every daemon on the machine); `private` is RSS without them, what each more daemon costs.
 */

export interface StartSample {
  readyMs: number;
  rssMb: number;
  privateMb: number;
}

const sourceEntry = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** The most an idle daemon (the bundle, as the router starts one per user) may hold resident. */
export const idleRssBoundMb = 80;

/**
 * The bench's judgement of the bundle's idle memory: the median of the starts against the bound. `ok` false fails the
 * run (the bench exits 1 with this line last).
 */
export function idleMemoryVerdict(bundle: { rssMb: number; maxRssMb: number }, starts: number): { ok: boolean; line: string } {
  const figures = `${bundle.rssMb.toFixed(1)} MB resident (median of ${starts} starts, max ${bundle.maxRssMb.toFixed(1)} MB)`;
  return bundle.rssMb < idleRssBoundMb
    ? { ok: true, line: `idle memory: ok, the bundle idles at ${figures}, under the ${idleRssBoundMb} MB bound` }
    : { ok: false, line: `FAIL idle memory: the bundle idles at ${figures}, over the ${idleRssBoundMb} MB bound` };
}

/** Resident MB of a process, and its RSS without the node executable's own pages. */
export function memoryOf(pid: number): { rssMb: number; privateMb: number } {
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  let executable = 0;
  let mapping = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) mapping = line.split(/\s+/)[5] ?? '';
    else if (line.startsWith('Rss:') && mapping === process.execPath) executable += Number(line.split(/\s+/)[1]);
  }
  return { rssMb: rss, privateMb: rss - executable / 1024 };
}

async function once(args: readonly string[], dataDir: string, port: number, idleMs: number): Promise<StartSample> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) break;
      if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    return { readyMs, ...memoryOf(child.pid as number) };
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/**
 * Runs the bundle (as the router launches it) and the sources (`node src/main.ts`) in turn, `runs` times each, on fresh
 * data folders, or on `dataDir` when given (a daemon with history).
 */
export async function measureStarts(options: { runs: number; idleMs: number; port: number; dataDir?: string }) {
  await ensureBundle();
  const bundle: StartSample[] = [];
  const source: StartSample[] = [];
  for (let run = 0; run < options.runs; run++) {
    for (const [samples, args] of [
      [bundle, [...daemonNodeFlags, bundleEntry]],
      [source, [sourceEntry]],
    ] as const) {
      const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'daemon-start-'));
      try {
        samples.push(await once(args, dataDir, options.port, options.idleMs));
      } finally {
        if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  const summary = (samples: StartSample[]) => ({
    readyMs: p50(samples.map((sample) => sample.readyMs)),
    rssMb: p50(samples.map((sample) => sample.rssMb)),
    privateMb: p50(samples.map((sample) => sample.privateMb)),
    maxRssMb: Math.max(...samples.map((sample) => sample.rssMb)),
    maxReadyMs: Math.max(...samples.map((sample) => sample.readyMs)),
  });
  return { bundle: summary(bundle), source: summary(source) };
}
