import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError } from '@platform/kit/config';
import { loadConfig } from '../src/config.ts';
import { parseVaultKeys, resolveKeyring } from '../src/vault/keyring.ts';

const b64 = (bytes = 32) => randomBytes(bytes).toString('base64');

/** Parses and expects a ConfigError naming the setting and never containing any of `secrets`. */
function refused(raw: string, pattern: RegExp, secrets: string[] = []) {
  assert.throws(
    () => parseVaultKeys(raw),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, /^CONNECTOR_VAULT_KEYS/);
      assert.match(error.message, pattern);
      assert.ok(!error.message.includes('\n'), 'one line');
      for (const secret of secrets) assert.ok(!error.message.includes(secret.slice(0, 12)), 'no key material in the message');
      return true;
    },
    raw.slice(0, 40),
  );
}

describe('CONNECTOR_VAULT_KEYS', () => {
  test('one key needs no mark; it is current', () => {
    const key = b64();
    const keyring = parseVaultKeys(`k1:${key}`);
    assert.equal(keyring.currentId, 'k1');
    assert.deepEqual(keyring.keys.get('k1'), Buffer.from(key, 'base64'));
  });

  test('several keys: the one marked * is current; spaces around entries are ignored', () => {
    const [a, b] = [b64(), b64()];
    const keyring = parseVaultKeys(`2025a:${a} , *2026a:${b}`);
    assert.equal(keyring.currentId, '2026a');
    assert.deepEqual([...keyring.keys.keys()], ['2025a', '2026a']);
  });

  test('base64url and unpadded keys are accepted and decode to the same 32 bytes', () => {
    const bytes = randomBytes(32);
    const keyring = parseVaultKeys(`a:${bytes.toString('base64url')},*b:${bytes.toString('base64').replace('=', '')}`);
    assert.deepEqual(keyring.keys.get('a'), bytes);
    assert.deepEqual(keyring.keys.get('b'), bytes);
  });

  test('a key of 31 or 33 bytes, non-base64, or non-canonical base64 is refused without echoing it', () => {
    for (const key of [b64(31), b64(33), b64(64), `${b64().slice(0, 42)}!=`])
      refused(`k1:${key}`, /entry 1 \(key id "k1"\) is not the base64 of exactly 32 bytes/, [key]);
    // The 43rd character carries 2 stray bits when it is not a multiple of 4: "B" decodes like "A", so it is refused.
    const canonical = b64();
    refused(`k1:${canonical.slice(0, 42)}B=`, /exactly 32 bytes/, [canonical]);
  });

  test('key ids: 32 characters pass, 33 and odd characters do not; a repeated id is refused', () => {
    assert.equal(parseVaultKeys(`${'a'.repeat(32)}:${b64()}`).currentId, 'a'.repeat(32));
    refused(`${'a'.repeat(33)}:${b64()}`, /entry 1 has a bad key id/);
    refused(`k.1:${b64()}`, /bad key id/);
    refused(`:${b64()}`, /bad key id/);
    const key = b64();
    refused(`k1:${key},*k1:${b64()}`, /entry 2 repeats key id "k1"/, [key]);
  });

  test('marks: none of several, or two, are refused', () => {
    refused(`a:${b64()},b:${b64()}`, /none is marked current/);
    refused(`*a:${b64()},*b:${b64()}`, /marks 2 keys current/);
  });

  test('malformed entries: no colon, an empty entry, a trailing comma', () => {
    const key = b64();
    refused(key, /entry 1 must be \[\*\]<id>:<base64 of 32 bytes>/, [key]);
    refused(`k1:${key},`, /entry 2 must be/, [key]);
    refused(`k1:${key},,*k2:${b64()}`, /entry 2 must be/, [key]);
  });

  test('16 keys are accepted, 17 are refused', () => {
    const entries = Array.from({ length: 16 }, (_, i) => `${i === 0 ? '*' : ''}k${i}:${b64()}`);
    assert.equal(parseVaultKeys(entries.join(',')).keys.size, 16);
    refused([...entries, `k16:${b64()}`].join(','), /more than 16 keys/);
  });
});

describe('connector settings', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('production requires the vault keys, the transport token and the auth secret; CONNECTOR_DEV lifts that', () => {
    const full = {
      NODE_ENV: 'production',
      PLATFORM_CONNECTOR_TOKEN: 't',
      CONNECTOR_AGENT_AUTH_SECRET: 's',
      CONNECTOR_VAULT_KEYS: `k1:${b64()}`,
      CONNECTOR_PUBLIC_URL: 'https://connector.example',
    };
    assert.equal(loadConfig(full).port, 9094);
    for (const missing of ['PLATFORM_CONNECTOR_TOKEN', 'CONNECTOR_AGENT_AUTH_SECRET', 'CONNECTOR_VAULT_KEYS'] as const) {
      assert.throws(() => loadConfig({ ...full, [missing]: '' }), new RegExp(`^ConfigError: ${missing} is required in production`));
      assert.equal(loadConfig({ ...full, [missing]: '', CONNECTOR_DEV: 'true' }).dev, true);
    }
  });

  test('a bad CONNECTOR_VAULT_KEYS stops loadConfig with one line and no key material', () => {
    const key = b64(31);
    assert.throws(
      () => loadConfig({ CONNECTOR_VAULT_KEYS: `k1:${key}` }),
      (error: unknown) => error instanceof ConfigError && !error.message.includes(key.slice(0, 12)),
    );
  });

  test('re-seal settings at and past their edges', () => {
    assert.equal(loadConfig({ CONNECTOR_RESEAL_BATCH: '1' }).resealBatch, 1);
    assert.equal(loadConfig({ CONNECTOR_RESEAL_BATCH: '10000' }).resealBatch, 10_000);
    assert.throws(() => loadConfig({ CONNECTOR_RESEAL_BATCH: '0' }), /CONNECTOR_RESEAL_BATCH/);
    assert.throws(() => loadConfig({ CONNECTOR_RESEAL_BATCH: '10001' }), /CONNECTOR_RESEAL_BATCH/);
    assert.equal(loadConfig({}).resealIntervalMs, 300_000);
    assert.equal(loadConfig({ CONNECTOR_RESEAL_INTERVAL: '1s' }).resealIntervalMs, 1_000);
    assert.throws(() => loadConfig({ CONNECTOR_RESEAL_INTERVAL: '999ms' }), /CONNECTOR_RESEAL_INTERVAL/);
  });

  test('in development with no keys, one key is generated once into DATA_DIR (owner-only) and reused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'connector-vault-'));
    dirs.push(dir);
    const first = resolveKeyring('', dir);
    assert.equal(first.keyring.currentId, 'dev');
    assert.match(first.source, /vault\.key \(generated\)$/);
    assert.equal(statSync(join(dir, 'vault.key')).mode & 0o777, 0o600);
    const second = resolveKeyring('', dir);
    assert.deepEqual(second.keyring.keys.get('dev'), first.keyring.keys.get('dev'));
    assert.equal(readFileSync(join(dir, 'vault.key'), 'utf8').trim(), first.keyring.keys.get('dev')?.toString('hex'));
    // Configured keys win over the file.
    assert.equal(resolveKeyring(`prod1:${b64()}`, dir).keyring.currentId, 'prod1');
  });
});
