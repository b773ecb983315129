import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cpuPerOperation, inTurns, type ObservabilityRow, observabilitySlots, pairedCost, pairedDifference, sideBySide, slotOf } from './observability-cost.ts';

const row = (byRound: number[]): ObservabilityRow => ({ setup: 'off', perSecond: 0, microsCpuPerOp: 0, turns: [], byRound });

test('a cost is read within each round: a machine that slows between rounds does not show as cost', () => {
  // The machine halves its speed after the first round; within every round the second setup is 5 % slower.
  const from = row([1000, 500, 500, 1000]);
  const to = row([950, 475, 475, 950]);
  const cost = pairedCost(from, to);
  assert.equal(cost.median.toFixed(3), '5.000');
  assert.equal(cost.low.toFixed(3), '5.000');
  assert.equal(cost.high.toFixed(3), '5.000');
  // One round in which the machine stalled during one setup's turns: the median over rounds leaves it out.
  const stalled = pairedCost(row([1000, 1000, 1000]), row([950, 500, 950]));
  assert.equal(stalled.median.toFixed(3), '5.000');
  assert.equal(stalled.high.toFixed(3), '50.000');
});

test('every slot is measured once a round, in rotating order, and each round gives a setup its mean', async () => {
  const order: string[] = [];
  const warmed: string[] = [];
  let turnNumber = 0;
  const rows = await inTurns(
    2,
    async (slot) => {
      warmed.push(slot.label);
    },
    async (slot) => {
      order.push(slot.label);
      turnNumber++;
      return { perSecond: slot.instance === 1 ? 100 * turnNumber : 300 * turnNumber, microsCpuPerOp: 10 };
    },
  );
  assert.deepEqual(
    warmed,
    observabilitySlots.map((slot) => slot.label),
  );
  assert.equal(order.length, observabilitySlots.length * 2);
  assert.deepEqual(
    order.slice(0, observabilitySlots.length),
    observabilitySlots.map((slot) => slot.label),
  );
  assert.equal(order[observabilitySlots.length], observabilitySlots[1]?.label, 'the second round starts one slot later');
  const off = rows.find((r) => r.setup === 'off');
  // off-1 is turn 1 (100) and off-2 turn 5 (1500) in round one; in round two off-1 is the last turn (16: 1600), off-2 turn 12 (3600).
  assert.deepEqual(off?.byRound, [800, 2600]);
  assert.equal(off?.turns.length, 4);
});

test('side by side: every setup measured at once each round, and a cost read as the median of the rounds’ differences', async () => {
  let inFlight = 0;
  let mostInFlight = 0;
  let calls = 0;
  const perRound = new Map<string, number>([
    ['off', 100],
    ['metrics', 102],
    ['metrics + tracing', 120],
    ['metrics + tracing 1 in 10', 104],
  ]);
  const instances: number[] = [];
  const results = await sideBySide(3, async (setup, instance) => {
    const round = Math.floor(calls++ / 4);
    instances.push(instance);
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight--;
    // The machine doubles every setup's cost in the second round: the differences double with it, and the median keeps the others'.
    return (perRound.get(setup) as number) * (round === 1 ? 2 : 1);
  });
  assert.equal(mostInFlight, 4, 'the four setups of a round ran at the same time');
  assert.deepEqual(instances, [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1], 'each setup’s first process, then its second, in turn');
  assert.deepEqual(results.get('off'), [100, 200, 100]);
  const tracing = pairedDifference(results.get('metrics') as number[], results.get('metrics + tracing') as number[]);
  assert.deepEqual(tracing, { median: 18, low: 18, high: 36 });
});

test('a setup’s process is found by its number, as the slot the benches key their processes by', () => {
  assert.equal(
    slotOf('metrics + tracing', 2),
    observabilitySlots.find((slot) => slot.label === 'metrics + tracing-2'),
  );
  assert.notEqual(slotOf('metrics', 1), slotOf('metrics', 2));
  assert.throws(() => slotOf('off', 3), /no process 3 of off/);
});

test('CPU an operation: the process’s CPU between two readings, over what the work did (at least one)', async () => {
  const readings = [
    { user: 1_000, system: 500 },
    { user: 4_000, system: 1_500 },
  ];
  const measured = await cpuPerOperation(
    async () => readings.shift() as { user: number; system: number },
    async () => ({ ok: 8 }),
    (run) => run.ok,
  );
  assert.deepEqual(measured, { result: { ok: 8 }, micros: 500 });
  const none = await cpuPerOperation(
    async () => ({ user: 0, system: 0 }),
    async () => 0,
    () => 0,
  );
  assert.equal(none.micros, 0);
});
