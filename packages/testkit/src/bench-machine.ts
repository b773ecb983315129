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

/**
 * The two kinds of 2-core machine sessions and CI land on, told apart by the processor's model name: a target that
 * holds on one may not on the other (the AMD EPYC class moves about a third of the Xeon class's loopback throughput),
 * so every bench names the class it ran on and each README quotes a run per class.
 */
export type MachineClass = 'Intel Xeon' | 'AMD EPYC' | 'other';

const classNotes: Record<MachineClass, string> = {
  // Faster in most sessions, not on every machine: one of 2026-12-02 ran half as fast as the class's earlier ones.
  'Intel Xeon': 'usually the faster of the two classes sessions and CI land on',
  'AMD EPYC': "the slower class: about a third of the Xeon class's loopback throughput",
  other: 'neither class sessions and CI land on: compare with care',
};

/** The class of a processor model name (`os.cpus()[0].model`). */
export function machineClassOf(model: string): MachineClass {
  if (/\bAMD EPYC\b/i.test(model)) return 'AMD EPYC';
  if (/\bIntel\b.*\bXeon\b/i.test(model)) return 'Intel Xeon';
  return 'other';
}

export interface BenchMachine {
  /** One line naming cores, model, memory and Node. */
  description: string;
  /** Which of the machine classes this is (see MachineClass). */
  machineClass: MachineClass;
  /** Cores busy, all processes together, over the sample taken before the run. */
  busyBefore: number;
  /** False when the machine was too busy and BENCH_ALLOW_BUSY let the run go on. */
  reportable: boolean;
  /** Cores the hypervisor gave to other guests on average since the preamble (steal); NaN where there is no /proc. */
  stolenCores(): number;
}

/**
 * The line a bench ends with: how much of the machine the hypervisor took while it ran. On a shared VM our processes
 * then wait for cores they were given (seen at 10-40 % of a core on the Intel Xeon class, 2026-12-02), which stretches
 * every latency and rate without showing in "busy before": a run is only comparable with one of similar steal.
 */
export function stealLine(stolenCores: number, cores = os.cpus().length): string {
  if (Number.isNaN(stolenCores)) return 'hypervisor steal during the run: – (no /proc)';
  return `hypervisor steal during the run: ${stolenCores.toFixed(2)} cores (${Math.round((stolenCores / cores) * 100)} % of the machine)`;
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
  options: {
    env?: NodeJS.ProcessEnv;
    measureBusy?: () => Promise<number>;
    exit?: (code: number) => never;
    cpuModel?: string;
    /** Where the steal line goes when the bench's process ends (tests pass their own). */
    atExit?: (print: () => void) => void;
  } = {},
): Promise<BenchMachine> {
  const env = options.env ?? process.env;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const description = describeMachine();
  const machineClass = machineClassOf(options.cpuModel ?? os.cpus()[0]?.model ?? '');
  const busyBefore = await (options.measureBusy ?? busyCores)();
  console.log(`${bench} benchmark`);
  console.log(`machine: ${description}`);
  console.log(`machine class: ${machineClass} (${classNotes[machineClass]})`);
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
  const started = cpuSnapshot();
  const stolenCores = () => cpuBetween(started, cpuSnapshot()).steal;
  // Every bench ends by saying how much the hypervisor took, whichever way it ends (process.exit or its last await).
  (options.atExit ?? ((print) => process.once('exit', print)))(() => console.log(`\n${stealLine(stolenCores())}`));
  return { description, machineClass, busyBefore, reportable: !tooBusy, stolenCores };
}
