import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { errorCatalogue, ServiceError } from './errors.ts';

// The documented table in ARCHITECTURE.md is what callers branch on; it must list exactly the catalogue.
const architecture = readFileSync(new URL('../../../ARCHITECTURE.md', import.meta.url), 'utf8');
const documented = new Map(
  [...architecture.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (yes|no) \|/gm)].map((row) => [
    row[1] as string,
    { status: Number(row[2]), retryable: row[3] === 'yes' },
  ]),
);

describe('the error catalogue', () => {
  test('ARCHITECTURE.md documents every code with its status and retryability, and nothing else', () => {
    const catalogue = new Map(Object.entries(errorCatalogue).map(([code, entry]) => [code, { status: entry.status, retryable: entry.retryable }]));
    assert.deepEqual(documented, catalogue);
  });
  test('a ServiceError takes its status and retryability from the catalogue unless told otherwise', () => {
    const error = new ServiceError('unavailable', 'sequencer busy');
    assert.deepEqual([error.status, error.retryable], [503, true]);
    assert.equal(new ServiceError('internal', 'x', { retryable: false }).retryable, false);
  });
});
