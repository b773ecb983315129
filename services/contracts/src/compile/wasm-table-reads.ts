/**
 * Makes `WebAssembly.Table.prototype.get` answer from a per-table cache, for the solc thread only.
 *
 * solc-js is Emscripten output built with JavaScript exceptions: every C++ call that may throw goes through an
 * `invoke_*` wrapper that looks its target up with `wasmTable.get(index)`, uncached (soljson.js's `getWasmTableEntry`),
 * millions of times a compile. Table.get is a call into the engine each time: profiled, 2.4 of the 11 s a compile of
 * a contract with forge-std spent in the thread. The cache keeps a table's answers by index and forgets an index when
 * it is `set` (a table that grows only adds indexes, which are not cached yet), so it answers what the table holds.
 */
interface Table {
  get(index: number): unknown;
  set(...args: [index: number, value?: unknown]): void;
}

const cacheKey = Symbol('cached table reads');
type CachingTable = Table & { [cacheKey]?: unknown[] };

export function cacheWasmTableReads(): void {
  const prototype = (globalThis as unknown as { WebAssembly: { Table: { prototype: Table } } }).WebAssembly.Table.prototype;
  const { get, set } = prototype;
  prototype.get = function (this: CachingTable, index: number) {
    this[cacheKey] ??= [];
    const cache = this[cacheKey];
    cache[index] ??= get.call(this, index);
    return cache[index];
  };
  // Arguments passed on as given: a missing value and an undefined one are not the same to Table.set.
  prototype.set = function (this: CachingTable, ...args: [index: number, value?: unknown]) {
    set.apply(this, args);
    if (this[cacheKey] !== undefined) this[cacheKey][args[0]] = undefined;
  };
}
