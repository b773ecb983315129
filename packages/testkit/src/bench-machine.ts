import os from 'node:os';
import { cpuBetween, cpuSnapshot } from './cpu.ts';

/*
 * What every benchmark prints first: the machine it ran on and how busy that machine already was.
 * A table measured on a machine that something else keeps busy compares our code with the noise, so a
 * run that starts on a machine busier than half a core is refused (exit 3) rather than reported.
 * BENCH_ALLOW_BUSY=1 runs it anyway for quick iterations while other work runs, and marks every line
 * that follows as not reportable.
 */

/** Cores above which a machine is too busy for a run worth reporting. */
export const busyLimitCores = 0.5;

export interface BenchMachine {
  /** One line naming cores, model, memory and Node. */
  description: string;
  /** Cores busy, all processes together, over the sample taken before the run. */
  busyBefore: number;
  /** False when the machine was too busy and BENCH_ALLOW_BUSY let the run go on. */
  reportable: boolean;
}

/** One line naming the machine: cores, model, memory, Node. */
export function describeMachine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model?.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Cores busy over `sampleMs`, read from /proc/stat; NaN where there is no /proc. */
export async function busyCores(sampleMs = 1_000): Promise<number> {
  const from = cpuSnapshot();
  await new Promise((resolve) => setTimeout(resolve, sampleMs));
  return cpuBetween(from, cpuSnapshot()).machine;
}

/**
 * Prints the machine and how busy it is, and refuses to go on (exit 3) when it is busier than half a core,
 * unless `BENCH_ALLOW_BUSY=1`. Call it before starting anything the benchmark runs.
 *
 * @example const machine = await benchPreamble('gateway'); ... if (!machine.reportable) console.log('(not reportable)');
 */
export async function benchPreamble(
  bench: string,
  options: { env?: NodeJS.ProcessEnv; measureBusy?: () => Promise<number>; exit?: (code: number) => never } = {},
): Promise<BenchMachine> {
  const env = options.env ?? process.env;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const description = describeMachine();
  const busyBefore = await (options.measureBusy ?? busyCores)();
  console.log(`${bench} benchmark`);
  console.log(`machine: ${description}`);
  console.log(`machine busy before the run: ${Number.isNaN(busyBefore) ? '– (no /proc)' : `${busyBefore.toFixed(2)} cores`}`);
  const tooBusy = busyBefore > busyLimitCores;
  if (tooBusy && env.BENCH_ALLOW_BUSY !== '1') {
    console.error(
      `the machine is already busier than ${busyLimitCores} cores (${busyBefore.toFixed(2)}): not reporting a run ` +
        '(wait for it to settle, or set BENCH_ALLOW_BUSY=1 for a run that is not to be reported)',
    );
    exit(3);
  }
  if (tooBusy) console.log('NOT REPORTABLE: BENCH_ALLOW_BUSY=1 on a busy machine; do not quote these figures');
  return { description, busyBefore, reportable: !tooBusy };
}
