import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cacheWasmTableReads } from './wasm-table-reads.ts';

interface Table {
  get(index: number): unknown;
  set(index: number, value?: unknown): void;
  grow(delta: number, value?: unknown): number;
}
const { Table } = (globalThis as unknown as { WebAssembly: { Table: new (descriptor: { element: string; initial: number }) => Table } }).WebAssembly;

test('cached table reads answer what each table holds, after a set and after it grows', () => {
  cacheWasmTableReads();
  const first = new Table({ element: 'externref', initial: 2 });
  const second = new Table({ element: 'externref', initial: 2 });
  const [a, b, c] = [{ name: 'a' }, { name: 'b' }, { name: 'c' }];
  first.set(0, a);
  second.set(0, b);
  assert.equal(first.get(0), a);
  assert.equal(second.get(0), b, 'each table has its own cache');
  first.set(0, c);
  assert.equal(first.get(0), c, 'a set replaces the cached read');
  first.set(0);
  assert.equal(first.get(0), undefined, 'a set without a value stores the default');
  assert.throws(() => first.get(2), RangeError);
  first.grow(1, a);
  assert.equal(first.get(2), a, 'an index read out of range before the table grew');
});
