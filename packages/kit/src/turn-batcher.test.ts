import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ItemOutcome, TurnBatcher } from './turn-batcher.ts';

describe('TurnBatcher', () => {
  it('sends the calls of one turn together, in order, at most maxItems to a send', async () => {
    const sends: number[][] = [];
    const batcher = new TurnBatcher<number, number>(async (items) => {
      sends.push(items);
      return items.map((item) => ({ ok: true, value: item * 10 }));
    }, 3);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((item) => batcher.add(item)));
    assert.deepEqual(answers, [10, 20, 30, 40, 50]);
    assert.deepEqual(sends, [
      [1, 2, 3],
      [4, 5],
    ]);
    // A call made later, alone, is a send of its own.
    assert.equal(await batcher.add(6), 60);
    assert.deepEqual(sends.at(-1), [6]);
  });

  it('fails an item alone with its own error, and every item of a send that throws', async () => {
    let broken = false;
    const batcher = new TurnBatcher<number, number>(async (items): Promise<Array<ItemOutcome<number>>> => {
      if (broken) throw new Error('unreachable');
      return items.map((item) => (item % 2 === 0 ? { ok: false, error: new Error(`refused ${item}`) } : { ok: true, value: item }));
    }, 10);
    const settled = await Promise.allSettled([1, 2, 3].map((item) => batcher.add(item)));
    assert.deepEqual(
      settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message)),
      [1, 'refused 2', 3],
    );
    broken = true;
    const failed = await Promise.allSettled([4, 5].map((item) => batcher.add(item)));
    assert.deepEqual(
      failed.map((outcome) => outcome.status === 'rejected' && (outcome.reason as Error).message),
      ['unreachable', 'unreachable'],
    );
  });

  it('refuses an answer with fewer results than items for the items left without one', async () => {
    const batcher = new TurnBatcher<number, number>(async () => [{ ok: true, value: 1 }], 10);
    const settled = await Promise.allSettled([1, 2].map((item) => batcher.add(item)));
    assert.equal(settled[0]?.status, 'fulfilled');
    assert.match(String(settled[1]?.status === 'rejected' && settled[1].reason), /1 results for 2 items/);
  });
});
