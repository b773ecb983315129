import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchPreamble, machineClassOf } from './bench-machine.ts';

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

test('a machine at half a core is quiet enough to report', async () => {
  const machine = await benchPreamble('t', { env: {}, measureBusy: busy(0.5), exit });
  assert.equal(machine.reportable, true);
  assert.equal(machine.busyBefore, 0.5);
  assert.match(machine.description, /\d+ × .+, \d+ GiB, Node v\d+/);
});

test('a machine past half a core refuses to report a run (exit 3)', async () => {
  await assert.rejects(benchPreamble('t', { env: {}, measureBusy: busy(0.51), exit }), (error: unknown) => (error as Exited).code === 3);
});

test('BENCH_ALLOW_BUSY=1 goes on, marked not reportable', async () => {
  const machine = await benchPreamble('t', { env: { BENCH_ALLOW_BUSY: '1' }, measureBusy: busy(1.7), exit });
  assert.equal(machine.reportable, false);
});

test('the machine class comes from the processor model: the two classes sessions and CI land on, and any other', async () => {
  assert.equal(machineClassOf('Intel(R) Xeon(R) Processor'), 'Intel Xeon');
  assert.equal(machineClassOf('Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz'), 'Intel Xeon');
  assert.equal(machineClassOf('AMD EPYC 7B13'), 'AMD EPYC');
  assert.equal(machineClassOf('AMD EPYC Processor (with IBPB)'), 'AMD EPYC');
  assert.equal(machineClassOf('Apple M2'), 'other');
  const machine = await benchPreamble('t', { env: {}, measureBusy: busy(0), exit, cpuModel: 'AMD EPYC 9B14' });
  assert.equal(machine.machineClass, 'AMD EPYC');
});
