import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generatePrivateKey } from 'viem/accounts';
import { KeyVault } from './key-vault.ts';

describe('KeyVault', () => {
  const vault = new KeyVault('11'.repeat(32));
  const key = generatePrivateKey();
  const did = 'did:platform:alice:0123456789abcdef';

  test('opens what it sealed, and the sealed form shows nothing of the key', () => {
    const sealed = vault.seal(key, did);
    assert.equal(vault.open(sealed, did), key);
    assert.ok(!Buffer.from(sealed, 'base64url').toString('hex').includes(key.slice(2)));
    assert.notEqual(vault.seal(key, did), sealed, 'a fresh IV each time');
  });

  test("refuses another DID's row, another wallet key, and any flipped bit", () => {
    const sealed = vault.seal(key, did);
    assert.throws(() => vault.open(sealed, 'did:platform:bob:fedcba9876543210'));
    assert.throws(() => new KeyVault('22'.repeat(32)).open(sealed, did));
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    assert.throws(() => vault.open(bytes.toString('base64url'), did));
  });

  test('names its key by a fingerprint, not the key', () => {
    assert.match(vault.keyId, /^[0-9a-f]{16}$/);
    assert.notEqual(vault.keyId, new KeyVault('22'.repeat(32)).keyId);
  });
});
