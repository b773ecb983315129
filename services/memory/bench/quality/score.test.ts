import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadQualitySet, type QualityQuery, scoreRankings } from './score.ts';
import { findProblems } from './validate-dataset.ts';

const queries: QualityQuery[] = [
  { id: 'a', scope: 'default', query: 'two expected', expected: ['m1', 'm2'], category: 'keyword' },
  { id: 'b', scope: 'default', query: 'no ranking given', expected: ['m3'], category: 'keyword' },
  { id: 'c', scope: 'default', query: 'stale first', expected: ['m4'], stale: ['m5'], category: 'updated' },
  { id: 'd', scope: 'default', query: 'clean update', expected: ['m6'], stale: ['m7'], category: 'updated' },
];

const rankings = new Map([
  ['a', ['x', 'm1', 'y', 'z', 'w', 'm2']], // m2 at rank 6: outside the top 5
  ['c', ['m5', 'm4']],
  ['d', ['m6', 'x', 'x', 'x', 'x', 'm7']], // m7 at rank 6 is not a stale hit
]);

describe('scoreRankings', () => {
  it('averages recall@5 and MRR over queries, counting a missing ranking as empty', () => {
    const s = scoreRankings(queries, rankings);
    assert.equal(s.queries, 4);
    assert.equal(s.recallAt5, (0.5 + 0 + 1 + 1) / 4);
    assert.equal(s.mrr, (1 / 2 + 0 + 1 / 2 + 1) / 4);
    assert.equal(s.staleAt5, 1 / 2);
  });

  it('splits the score by category', () => {
    const s = scoreRankings(queries, rankings);
    assert.deepEqual(s.byCategory.keyword, { recallAt5: 0.25, mrr: 0.25, queries: 2 });
    assert.deepEqual(s.byCategory.updated, { recallAt5: 1, mrr: 0.75, queries: 2 });
  });

  it('honours k and does not count duplicates twice', () => {
    const s = scoreRankings([queries[0]!], new Map([['a', ['m1', 'm1', 'm2']]]), 2);
    assert.equal(s.recallAt5, 0.5);
    assert.equal(s.mrr, 1);
    assert.equal(scoreRankings([queries[0]!], rankings, 6).recallAt5, 1);
  });

  it('gives zeros, not NaN, for no queries', () => {
    assert.deepEqual(scoreRankings([], new Map()), { recallAt5: 0, mrr: 0, queries: 0, staleAt5: 0, byCategory: {} });
  });
});

describe('quality set', () => {
  it('passes its own consistency checks', () => {
    const { memories, queries } = loadQualitySet();
    assert.deepEqual(findProblems(memories, queries), []);
  });

  it('catches an expected ref that was superseded and a supersession pointing forward', () => {
    const memories = [
      { ref: 'm001', scope: 'default', content: 'old', kind: 'fact' as const, tags: [], importance: 0.5, days_ago: 10, supersedes: ['m002'] },
      { ref: 'm002', scope: 'default', content: 'new', kind: 'fact' as const, tags: [], importance: 0.5, days_ago: 5, supersedes: ['m001'] },
    ];
    const problems = findProblems(memories, [{ id: 'q1', scope: 'default', query: 'x', expected: ['m001'], category: 'keyword' }]);
    assert.ok(problems.some((p) => p.includes('m002, which is not an earlier memory')));
    assert.ok(problems.some((p) => p.includes('expected m001 is superseded')));
  });
});
