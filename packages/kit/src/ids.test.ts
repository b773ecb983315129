import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { monotonicUuidv7, uuidv7 } from './ids.ts';

const uuidv7Pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('has the UUID layout with version 7 and the 10xx variant', () => {
    for (let i = 0; i < 200; i++) assert.match(uuidv7(), uuidv7Pattern);
  });

  it('puts the Unix milliseconds in the first 48 bits', () => {
    const at = Date.UTC(2026, 2, 8, 7, 0, 0, 123);
    const id = uuidv7(at);
    assert.equal(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16), at);
  });

  it('uses the current time by default', () => {
    const before = Date.now();
    const id = uuidv7();
    const after = Date.now();
    const embedded = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    assert.ok(embedded >= before && embedded <= after, `${embedded} not within [${before}, ${after}]`);
  });

  it('sorts as strings in creation order for increasing milliseconds', () => {
    const start = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 100 }, (_, i) => uuidv7(start + i * 37));
    assert.deepEqual([...ids].sort(), ids);
  });

  it('sorts correctly across a carry in the timestamp (…ff → …00)', () => {
    const ids = [uuidv7(0xff_ffff), uuidv7(0x100_0000), uuidv7(0x100_0001)];
    assert.deepEqual([...ids].sort(), ids);
  });

  it('differs between two ids made in the same millisecond', () => {
    const at = Date.UTC(2026, 0, 1);
    assert.notEqual(uuidv7(at), uuidv7(at));
  });

  it('never repeats its random part across refills of its random pool (256 ids per refill)', () => {
    const at = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 1_000 }, () => uuidv7(at));
    for (const id of ids) assert.match(id, uuidv7Pattern);
    assert.equal(new Set(ids).size, ids.length);
  });
});

describe('monotonicUuidv7', () => {
  it('sorts in creation order within one millisecond, across a counter overflow and when the clock steps back', () => {
    const ids = [
      ...Array.from({ length: 5000 }, () => monotonicUuidv7(1_800_000_000_000)),
      monotonicUuidv7(1_799_999_999_000),
      monotonicUuidv7(1_800_000_000_500),
    ];
    for (const id of ids) assert.match(id, uuidv7Pattern);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });
});
