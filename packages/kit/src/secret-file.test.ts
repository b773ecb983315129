import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from './config.ts';
import { secretFromSettingOrFile } from './secret-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'secret-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the setting wins when it is set, and nothing is written', () => {
  const folder = join(dir, 'set');
  assert.deepEqual(secretFromSettingOrFile('ab'.repeat(32), folder, 'x.key', 'X_KEY'), { hex: 'ab'.repeat(32), source: 'X_KEY' });
  assert.throws(() => statSync(join(folder, 'x.key')));
});

test('without the setting a secret is generated once, owner-only, and read back the same after a restart', () => {
  const folder = join(dir, 'generated');
  const first = secretFromSettingOrFile('', folder, 'x.key', 'X_KEY');
  assert.match(first.hex, /^[0-9a-f]{64}$/);
  assert.match(first.source, /generated/);
  assert.equal(statSync(join(folder, 'x.key')).mode & 0o777, 0o600);
  const again = secretFromSettingOrFile('', folder, 'x.key', 'X_KEY');
  assert.equal(again.hex, first.hex);
  assert.equal(again.source, join(folder, 'x.key'));
});

test('a file that does not hold 64 hex characters stops the start instead of being replaced', () => {
  const folder = join(dir, 'broken');
  secretFromSettingOrFile('', folder, 'x.key', 'X_KEY');
  writeFileSync(join(folder, 'x.key'), 'not a key\n');
  assert.throws(() => secretFromSettingOrFile('', folder, 'x.key', 'X_KEY'), ConfigError);
});
