import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GroupCommit } from './group-commit.ts';

/** A batch runner the test finishes by hand, recording every batch it was given. */
function manualRunner() {
  const batches: Array<{ items: string[]; finish: () => void; fail: (error: Error) => void }> = [];
  const run = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ items, finish: () => resolve(items.map((item) => `done ${item}`)), fail: reject });
    });
  return { batches, run };
}

const keyOf = (item: string) => item.split(':')[0] as string;
// Two turns: a finished batch schedules the next one at the end of the turn its completion runs in.
const settle = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('group commit', () => {
  test('a quiet queue sends at the end of the turn; items arriving while a batch is out wait and go together', async () => {
    const { batches, run } = manualRunner();
    const commit = new GroupCommit(run, { keyOf, maxBatch: 10, maxInFlight: 1 });
    const first = commit.submit('a:1');
    assert.equal(batches.length, 0, 'nothing leaves before the turn ends');
    await settle();
    assert.deepEqual(
      batches.map((batch) => batch.items),
      [['a:1']],
    );
    const later = [commit.submit('b:1'), commit.submit('c:1')];
    await settle();
    assert.equal(batches.length, 1, 'nothing more while the batch is in flight');
    batches[0]?.finish();
    assert.equal(await first, 'done a:1');
    await settle();
    assert.deepEqual(batches[1]?.items, ['b:1', 'c:1']);
    batches[1]?.finish();
    assert.deepEqual(await Promise.all(later), ['done b:1', 'done c:1']);
    await commit.idle();
  });

  test('items submitted in one turn share a batch', async () => {
    const { batches, run } = manualRunner();
    const commit = new GroupCommit(run, { keyOf, maxBatch: 10, maxInFlight: 4 });
    const outcomes = ['a:1', 'b:1', 'a:2'].map((item) => commit.submit(item));
    await settle();
    assert.deepEqual(
      batches.map((batch) => batch.items),
      [['a:1', 'b:1', 'a:2']],
    );
    batches[0]?.finish();
    assert.deepEqual(await Promise.all(outcomes), ['done a:1', 'done b:1', 'done a:2']);
  });

  test("other keys go ahead in parallel, but a key's items never overtake one in flight", async () => {
    const { batches, run } = manualRunner();
    const commit = new GroupCommit(run, { keyOf, maxBatch: 10, maxInFlight: 4 });
    const outcomes = [commit.submit('a:1')];
    await settle();
    outcomes.push(commit.submit('a:2'), commit.submit('b:1'));
    await settle();
    assert.deepEqual(
      batches.map((batch) => batch.items),
      [['a:1'], ['b:1']],
      'a:2 waits for a:1; b:1 goes at once',
    );
    batches[0]?.finish();
    await outcomes[0];
    await settle();
    assert.deepEqual(batches[2]?.items, ['a:2']);
    batches[1]?.finish();
    batches[2]?.finish();
    assert.deepEqual(await Promise.all(outcomes), ['done a:1', 'done a:2', 'done b:1']);
  });

  test('a failed batch rejects its items only, and idle() waits for everything submitted', async () => {
    const { batches, run } = manualRunner();
    const commit = new GroupCommit(run, { keyOf, maxBatch: 1, maxInFlight: 2 });
    const failing = commit.submit('a:1');
    const passing = commit.submit('b:1');
    await settle();
    let idle = false;
    const waited = commit.idle().then(() => {
      idle = true;
    });
    batches[0]?.fail(new Error('database gone'));
    await assert.rejects(failing, /database gone/);
    assert.equal(idle, false);
    batches[1]?.finish();
    assert.equal(await passing, 'done b:1');
    await waited;
  });

  test('items without a key never wait for one another: batches go in parallel up to maxInFlight', async () => {
    const { batches, run } = manualRunner();
    const commit = new GroupCommit(run, { maxBatch: 2, maxInFlight: 2 });
    const outcomes = ['x', 'y', 'z', 'w', 'v'].map((item) => commit.submit(item));
    await settle();
    assert.deepEqual(
      batches.map((batch) => batch.items),
      [
        ['x', 'y'],
        ['z', 'w'],
      ],
      'two batches of two at once; the fifth waits for room',
    );
    batches[1]?.finish();
    await settle();
    assert.deepEqual(batches[2]?.items, ['v']);
    batches[0]?.finish();
    batches[2]?.finish();
    assert.deepEqual(await Promise.all(outcomes), ['done x', 'done y', 'done z', 'done w', 'done v']);
  });

  test('a batch answering another number of results than items fails every item of it', async () => {
    const commit = new GroupCommit(async (items: string[]) => items.slice(1), { maxBatch: 10, maxInFlight: 1 });
    const outcomes = await Promise.allSettled(['a', 'b'].map((item) => commit.submit(item)));
    for (const outcome of outcomes) assert.match(String(outcome.status === 'rejected' && outcome.reason), /2 items answered 1 results/);
  });

  describe('lingering (lingerMs): items nobody waits on wait a while for company', () => {
    /** Timers the test fires by hand. */
    function manualTimers() {
      const timers: Array<{ ms: number; fire: () => void; cancelled: boolean }> = [];
      const timer = (run: () => void, ms: number) => {
        const entry = { ms, fire: run, cancelled: false };
        timers.push(entry);
        return () => {
          entry.cancelled = true;
        };
      };
      return { timers, timer };
    }
    // Bookings linger; a grant (`g…`) is waited on.
    const urgent = (item: string) => item.startsWith('g');
    /** A group commit whose batches and timers the test finishes and fires by hand. */
    function lingeringCommit(options: { maxBatch: number; lingerMs: number }) {
      const { batches, run } = manualRunner();
      const { timers, timer } = manualTimers();
      const commit = new GroupCommit(run, { keyOf, maxInFlight: 4, urgent, timer, ...options });
      return { batches, timers, commit };
    }

    test('lingering items leave together when the first has waited lingerMs, not at the end of its turn', async () => {
      const { batches, timers, commit } = lingeringCommit({ maxBatch: 10, lingerMs: 5 });
      const outcomes = [commit.submit('a:1')];
      await settle();
      outcomes.push(commit.submit('b:1'));
      await settle();
      assert.equal(batches.length, 0, 'nothing left at the end of either turn');
      assert.equal(timers.length, 1, 'one timer for the batch, not one an item');
      assert.ok((timers[0]?.ms ?? 0) > 0 && (timers[0]?.ms ?? 0) <= 5);
      timers[0]?.fire();
      assert.deepEqual(
        batches.map((batch) => batch.items),
        [['a:1', 'b:1']],
      );
      batches[0]?.finish();
      assert.deepEqual(await Promise.all(outcomes), ['done a:1', 'done b:1']);
    });

    test('an item a caller waits on leaves at the end of its turn and takes the lingering ones with it', async () => {
      const { batches, timers, commit } = lingeringCommit({ maxBatch: 10, lingerMs: 5 });
      const outcomes = [commit.submit('a:1'), commit.submit('g:1')];
      await settle();
      assert.deepEqual(
        batches.map((batch) => batch.items),
        [['a:1', 'g:1']],
      );
      assert.equal(timers[0]?.cancelled, true, 'the lingering timer is cancelled');
      batches[0]?.finish();
      assert.deepEqual(await Promise.all(outcomes), ['done a:1', 'done g:1']);
    });

    test('a full batch leaves at once, and idle() sends what lingers without waiting', async () => {
      const { batches, commit } = lingeringCommit({ maxBatch: 2, lingerMs: 1_000 });
      const full = [commit.submit('a:1'), commit.submit('b:1')];
      await settle();
      assert.deepEqual(
        batches.map((batch) => batch.items),
        [['a:1', 'b:1']],
      );
      const lingering = commit.submit('c:1');
      await settle();
      assert.equal(batches.length, 1, 'one item lingers');
      const idle = commit.idle();
      await settle();
      assert.deepEqual(batches[1]?.items, ['c:1'], 'idle() brought it forward');
      for (const batch of batches) batch.finish();
      assert.deepEqual([...(await Promise.all(full)), await lingering], ['done a:1', 'done b:1', 'done c:1']);
      await idle;
    });
  });
});
