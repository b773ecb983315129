import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchPreamble, machineClassOf, stealLine } from './bench-machine.ts';

class Exited extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}
const exit = (code: number): never => {
  throw new Exited(code);
};
const busy = (cores: number) => async () => cores;
const atExit = () => {};

test('a machine at half a core is quiet enough to report', async () => {
  const machine = await benchPreamble('t', { env: {}, atExit, measureBusy: busy(0.5), exit });
  assert.equal(machine.reportable, true);
  assert.equal(machine.busyBefore, 0.5);
  assert.match(machine.description, /\d+ × .+, \d+ GiB, Node v\d+/);
});

test('a machine past half a core refuses to report a run (exit 3)', async () => {
  await assert.rejects(benchPreamble('t', { env: {}, atExit, measureBusy: busy(0.51), exit }), (error: unknown) => (error as Exited).code === 3);
});

test('BENCH_ALLOW_BUSY=1 goes on, marked not reportable', async () => {
  const machine = await benchPreamble('t', { env: { BENCH_ALLOW_BUSY: '1' }, atExit, measureBusy: busy(1.7), exit });
  assert.equal(machine.reportable, false);
});

test('the machine class comes from the processor model: the two classes sessions and CI land on, and any other', async () => {
  assert.equal(machineClassOf('Intel(R) Xeon(R) Processor'), 'Intel Xeon');
  assert.equal(machineClassOf('Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz'), 'Intel Xeon');
  assert.equal(machineClassOf('AMD EPYC 7B13'), 'AMD EPYC');
  assert.equal(machineClassOf('AMD EPYC Processor (with IBPB)'), 'AMD EPYC');
  assert.equal(machineClassOf('Apple M2'), 'other');
  const machine = await benchPreamble('t', { env: {}, atExit, measureBusy: busy(0), exit, cpuModel: 'AMD EPYC 9B14' });
  assert.equal(machine.machineClass, 'AMD EPYC');
});

test('a bench ends by saying how much of the machine the hypervisor took while it ran', async (t) => {
  let print: (() => void) | undefined;
  const machine = await benchPreamble('t', {
    env: {},
    measureBusy: busy(0),
    exit,
    atExit: (printer) => {
      print = printer;
    },
  });
  assert.ok(print, 'the steal line is left for the end of the run');
  const log = t.mock.method(console, 'log', () => {});
  print();
  assert.match(String(log.mock.calls.at(-1)?.arguments[0]), /^\nhypervisor steal during the run: (\d+\.\d\d cores \(\d+ % of the machine\)|– \(no \/proc\))$/);
  assert.ok(!(machine.stolenCores() < 0), 'steal is never negative');
  assert.equal(stealLine(0.5, 2), 'hypervisor steal during the run: 0.50 cores (25 % of the machine)');
  assert.equal(stealLine(Number.NaN, 2), 'hypervisor steal during the run: – (no /proc)');
});
