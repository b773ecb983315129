import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '@platform/testkit/manual-clock';
import { pino } from 'pino';
import { Activity, IdleReaper } from './idle-reaper.ts';
import type { EnvironmentProvider, EnvironmentUser } from './provider.ts';

const user: EnvironmentUser = { id: 'a1b2c3d4-0000-4000-8000-000000000001', region: 'local', environmentId: 'env-1', volume: 'vol-1' };

/** A reaper over one running environment whose `working` probe the test answers by hand. */
function reaperWithProbe() {
  const clock = new ManualClock(new Date('2026-12-03T12:00:00Z'));
  const activity = new Activity(clock);
  const stopped: string[] = [];
  const provider = { running: () => [user.id], stop: async (stopping: EnvironmentUser) => void stopped.push(stopping.id) } as unknown as EnvironmentProvider;
  const probes: Array<(working: boolean) => void> = [];
  const reaper = new IdleReaper({
    provider,
    activity,
    clock,
    logger: pino({ level: 'silent' }),
    idleTimeoutMs: 1_000,
    lookup: async () => user,
    working: () => new Promise<boolean>((resolve) => probes.push(resolve)),
  });
  const probed = async () => {
    while (probes.length === 0) await new Promise((resolve) => setImmediate(resolve));
    return probes.shift() as (working: boolean) => void;
  };
  return { clock, activity, stopped, reaper, probed };
}

test('a request that comes in while the reaper probes an idle environment keeps it running', async () => {
  const { clock, activity, stopped, reaper, probed } = reaperWithProbe();
  activity.begin(user.id);
  activity.end(user.id);
  clock.advance(5_000);
  const round = reaper.reap();
  const answer = await probed();
  activity.begin(user.id); // a wake arrives while the probe is out
  answer(false);
  assert.deepEqual(await round, []);
  assert.deepEqual(stopped, []);

  // A request that began and ended during the probe counts too: seen after the round began.
  activity.end(user.id);
  clock.advance(5_000);
  const next = reaper.reap();
  const again = await probed();
  clock.advance(10);
  activity.begin(user.id);
  activity.end(user.id);
  again(false);
  assert.deepEqual(await next, []);

  // Nobody came: stopped.
  clock.advance(5_000);
  const last = reaper.reap();
  (await probed())(false);
  assert.deepEqual(await last, [user.id]);
  assert.deepEqual(stopped, [user.id]);
});
