import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { appendLineDurably, readJsonLines, repairTail, writeFileDurably } from './durable-files.ts';

const folder = mkdtempSync(join(tmpdir(), 'durable-'));
after(() => rmSync(folder, { recursive: true, force: true }));

test('a whole-file write replaces atomically and leaves no temporary file; exclusive refuses to replace', async () => {
  const path = join(folder, 'a.json');
  assert.equal(await writeFileDurably(path, '{"v":1}'), true);
  assert.equal(await writeFileDurably(path, '{"v":2}'), true);
  assert.equal(readFileSync(path, 'utf8'), '{"v":2}');
  assert.equal(await writeFileDurably(path, '{"v":3}', { exclusive: true }), false);
  assert.equal(readFileSync(path, 'utf8'), '{"v":2}');
  assert.deepEqual(
    readdirSync(folder).filter((name) => name.startsWith('.tmp')),
    [],
  );
});

test('a torn last line (a crash mid-append) is skipped when read and cut before the next append', async () => {
  const path = join(folder, 'log.jsonl');
  await appendLineDurably(path, '{"n":1}');
  appendFileSync(path, '{"n":2,"tor');
  assert.deepEqual(await readJsonLines(path), [{ n: 1 }]);
  await repairTail(path);
  await appendLineDurably(path, '{"n":3}');
  assert.deepEqual(await readJsonLines(path), [{ n: 1 }, { n: 3 }]);
  assert.equal(readFileSync(path, 'utf8'), '{"n":1}\n{"n":3}\n');
  assert.deepEqual(await readJsonLines(join(folder, 'missing.jsonl')), []);
});
