import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { ManualClock } from '@platform/testkit/manual-clock';
import { IdleSweep } from '../src/proxy/idle-sweep.ts';

/** Lets the sweep's loop run after the clock moved (its sleep resolves on a later turn). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await turn();
}

test('an exchange is cut once nothing moved for the timeout, within a quarter more; one that moves is not; a stopped one never', async () => {
  const clock = new ManualClock();
  const sweep = new IdleSweep(clock, 2_000);
  const cut: string[] = [];
  const quiet = sweep.watch(() => cut.push('quiet'));
  const busy = sweep.watch(() => cut.push('busy'));
  const finished = sweep.watch(() => cut.push('finished'));
  finished.stop();
  for (let elapsed = 500; elapsed < 2_000; elapsed += 500) {
    clock.advance(500);
    busy.touch();
    await settle();
  }
  assert.deepEqual(cut, [], 'nothing is cut before the timeout');
  clock.advance(500);
  await settle();
  assert.deepEqual(cut, ['quiet'], 'cut at its timeout');
  clock.advance(2_000);
  await settle();
  assert.deepEqual(cut, ['quiet', 'busy'], 'the busy one once it stopped moving, each once');
  quiet.stop();
  busy.stop();
  sweep.close();
});

test('a sweep whose exchanges all ended stops, and starts again for the next one', async () => {
  const clock = new ManualClock();
  const sweep = new IdleSweep(clock, 1_000);
  const cut: number[] = [];
  sweep.watch(() => cut.push(1)).stop();
  clock.advance(250);
  await settle();
  // Its loop ended with its last exchange; the next watch must start another, or it would never be cut.
  clock.advance(10_000);
  await settle();
  sweep.watch(() => cut.push(2));
  clock.advance(1_000);
  await settle();
  clock.advance(250);
  await settle();
  assert.deepEqual(cut, [2]);
  sweep.close();
});
