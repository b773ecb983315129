import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rankWithOfficialServer } from './official-server.ts';
import type { QualityMemory, QualityQuery } from './score.ts';

const memory = (ref: string, content: string, supersedes?: string[]): QualityMemory => ({
  ref,
  scope: 'default',
  content,
  kind: 'preference',
  tags: ['coffee'],
  importance: 0.5,
  days_ago: 1,
  ...(supersedes ? { supersedes } : {}),
});

const memories = [
  memory('m001', "The user's coffee order is an oat milk flat white."),
  memory('m002', 'Maria (the sister) has a severe peanut allergy.'),
  memory('m003', "The user's coffee order is now a cortado.", ['m001']),
];

const queries: QualityQuery[] = [
  { id: 'q1', scope: 'default', query: 'Peanut', expected: ['m002'], category: 'keyword' },
  { id: 'q2', scope: 'default', query: 'coffee order', expected: ['m003'], stale: ['m001'], category: 'updated' },
  // The whole query must be a substring, so a natural question finds nothing.
  { id: 'q3', scope: 'default', query: 'what is my coffee order?', expected: ['m003'], category: 'paraphrase' },
  { id: 'q4', scope: 'elsewhere', query: 'coffee', expected: [], category: 'keyword' },
];

describe('rankWithOfficialServer', { timeout: 10_000 }, () => {
  it('returns substring matches in scope, never the superseded memory', async () => {
    const rankings = await rankWithOfficialServer(memories, queries);
    assert.deepEqual(rankings.get('q1'), ['m002']);
    assert.deepEqual(rankings.get('q2'), ['m003']);
    assert.deepEqual(rankings.get('q3'), []);
    assert.deepEqual(rankings.get('q4'), []);
  });
});
