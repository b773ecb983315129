import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceError } from '@platform/kit/errors';
import { additionalData, type Sealed, Vault } from '../src/vault/vault.ts';
import { keyringOf } from './harness.ts';

const alice = { owner: 'alice', connector: 'google-workspace' };
const secret = Buffer.from('{"access_token":"ya29.secret-token"}');

function flip(bytes: Buffer, index = 0): Buffer {
  const copy = Buffer.from(bytes);
  copy[index] = (copy[index] as number) ^ 0x01;
  return copy;
}

function assertVaultError(fn: () => unknown, code: string, reason: string) {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ServiceError);
    assert.equal(error.code, code);
    assert.equal(error.details?.reason, reason);
    assert.doesNotMatch(error.message, /secret-token/);
    return true;
  });
}

describe('vault', () => {
  test('unseal returns what seal was given, under the current key id, with a 12-byte IV and 16-byte tag', () => {
    const vault = new Vault(keyringOf(['k1']));
    const sealed = vault.seal(secret, alice);
    assert.equal(sealed.keyId, 'k1');
    assert.equal(sealed.iv.length, 12);
    assert.equal(sealed.tag.length, 16);
    assert.equal(sealed.ciphertext.length, secret.length);
    assert.ok(!sealed.ciphertext.includes(Buffer.from('secret-token')));
    assert.deepEqual(vault.unseal(sealed, alice), secret);
  });

  test('every seal takes a fresh IV: 2,000 seals of one value, 2,000 IVs and ciphertexts', () => {
    const vault = new Vault(keyringOf(['k1']));
    const ivs = new Set<string>();
    const ciphertexts = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const sealed = vault.seal(secret, alice);
      ivs.add(sealed.iv.toString('hex'));
      ciphertexts.add(sealed.ciphertext.toString('hex'));
    }
    assert.equal(ivs.size, 2_000);
    assert.equal(ciphertexts.size, 2_000);
  });

  test('the additional data binds owner and connector: another owner or connector fails', () => {
    const vault = new Vault(keyringOf(['k1']));
    const sealed = vault.seal(secret, alice);
    assertVaultError(() => vault.unseal(sealed, { owner: 'bob', connector: 'google-workspace' }), 'internal', 'vault_unseal_failed');
    assertVaultError(() => vault.unseal(sealed, { owner: 'alice', connector: 'other-connector' }), 'internal', 'vault_unseal_failed');
    // The owner/connector boundary cannot be moved: "a\nb" + "c" is not "a" + "b\nc" (connector ids hold no newline).
    assert.throws(() => additionalData({ owner: 'a', connector: 'b\nc' }));
    assert.notDeepEqual(additionalData({ owner: 'a\nb', connector: 'c' }), additionalData({ owner: 'a', connector: 'b-c' }));
    assert.equal(additionalData(alice).toString(), 'connector-vault-v1\nalice\ngoogle-workspace');
  });

  test('a flipped bit anywhere (IV, ciphertext, tag) fails; so do a truncated tag and a swapped key id', () => {
    const keyring = keyringOf(['k1', 'k2']);
    const vault = new Vault(keyring);
    const sealed = vault.seal(secret, alice);
    const variants: Array<[string, Sealed]> = [
      ['iv', { ...sealed, iv: flip(sealed.iv) }],
      ['ciphertext first byte', { ...sealed, ciphertext: flip(sealed.ciphertext) }],
      ['ciphertext last byte', { ...sealed, ciphertext: flip(sealed.ciphertext, sealed.ciphertext.length - 1) }],
      ['ciphertext truncated', { ...sealed, ciphertext: sealed.ciphertext.subarray(1) }],
      ['tag', { ...sealed, tag: flip(sealed.tag, 15) }],
      ['tag truncated', { ...sealed, tag: sealed.tag.subarray(0, 12) }],
      ['key id', { ...sealed, keyId: 'k2' }],
      ['iv too short', { ...sealed, iv: sealed.iv.subarray(0, 8) }],
    ];
    for (const [name, variant] of variants) {
      assert.throws(
        () => vault.unseal(variant, alice),
        (error: unknown) => error instanceof ServiceError && error.details?.reason === 'vault_unseal_failed',
        name,
      );
    }
  });

  test('a value sealed with a key no longer configured fails loudly: unavailable, vault_key_missing, not retryable', () => {
    const keys = new Map<string, Buffer>();
    const old = new Vault(keyringOf(['k1'], 'k1', keys));
    const sealed = old.seal(secret, alice);
    const rotated = new Vault(keyringOf(['k2'], 'k2', keys));
    assertVaultError(() => rotated.unseal(sealed, alice), 'unavailable', 'vault_key_missing');
    try {
      rotated.unseal(sealed, alice);
    } catch (error) {
      assert.equal((error as ServiceError).retryable, false);
      assert.match((error as ServiceError).message, /vault key "k1", which this instance does not have: the operator must add it to CONNECTOR_VAULT_KEYS/);
    }
  });

  test('rotation: the new current key seals, the retired key still opens old values', () => {
    const keys = new Map<string, Buffer>();
    const before = new Vault(keyringOf(['k1'], 'k1', keys));
    const old = before.seal(secret, alice);
    const after = new Vault(keyringOf(['k1', 'k2'], 'k2', keys));
    assert.equal(after.currentKeyId, 'k2');
    assert.deepEqual(after.retiredKeyIds, ['k1']);
    assert.equal(after.seal(secret, alice).keyId, 'k2');
    assert.deepEqual(after.unseal(old, alice), secret);
  });

  test('keys before the current one are retired (re-sealed from), keys after it staged (opened, never re-sealed from)', () => {
    const keys = new Map<string, Buffer>();
    const staged = new Vault(keyringOf(['k1', 'k2'], 'k1', keys));
    assert.deepEqual([staged.retiredKeyIds, staged.stagedKeyIds], [[], ['k2']]);
    const rotated = new Vault(keyringOf(['k1', 'k2'], 'k2', keys));
    assert.deepEqual(staged.unseal(rotated.seal(secret, alice), alice), secret);
    const middle = new Vault(keyringOf(['k1', 'k2', 'k3'], 'k2', keys));
    assert.deepEqual([middle.retiredKeyIds, middle.stagedKeyIds], [['k1'], ['k3']]);
  });

  test('a keyring whose current key is absent is refused at construction', () => {
    assert.throws(() => new Vault({ currentId: 'k9', keys: new Map([['k1', Buffer.alloc(32)]]) }), /k9/);
  });
});
