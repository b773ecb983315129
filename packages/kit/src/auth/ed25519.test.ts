import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { defaultSignerEngine, messageSigner, privateKeyFromSeed, publicKeyFromHex, publicKeyHex, signMessage, verifyMessage } from './ed25519.ts';

// RFC 8032 section 7.1, TEST 1.
const rfcSeed = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const rfcPublic = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const rfcSignature = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

const seed = '1f'.repeat(32);

describe('ed25519 RFC 8032 test vector 1', () => {
  it('derives the published public key from the secret key', () => {
    assert.equal(publicKeyHex(privateKeyFromSeed(rfcSeed)), rfcPublic);
  });

  it('produces the published signature for the empty message', () => {
    assert.equal(signMessage(privateKeyFromSeed(rfcSeed), ''), rfcSignature);
  });

  it('verifies the published signature with the published public key', () => {
    const publicKey = publicKeyFromHex(rfcPublic);
    assert.ok(publicKey);
    assert.equal(verifyMessage(publicKey, '', rfcSignature), true);
  });

  it('accepts uppercase hex for key and signature', () => {
    const publicKey = publicKeyFromHex(rfcPublic.toUpperCase());
    assert.ok(publicKey);
    assert.equal(verifyMessage(publicKey, '', rfcSignature.toUpperCase()), true);
  });
});

describe('ed25519 sign and verify', () => {
  const privateKey = privateKeyFromSeed(seed);
  const publicHex = publicKeyHex(privateKey);
  const publicKey = publicKeyFromHex(publicHex);

  it('round-trips seed → public key → sign → verify', () => {
    assert.match(publicHex, /^[0-9a-f]{64}$/);
    assert.ok(publicKey);
    const signature = signMessage(privateKey, 'hello, world');
    assert.match(signature, /^[0-9a-f]{128}$/);
    assert.equal(verifyMessage(publicKey, 'hello, world', signature), true);
  });

  it('signs UTF-8 text: the signature matches node:crypto over the UTF-8 bytes', () => {
    const message = 'grüße ✓';
    assert.equal(signMessage(privateKey, message), sign(null, Buffer.from(message, 'utf8'), privateKey).toString('hex'));
  });

  it('refuses a signature over a different message', () => {
    assert.ok(publicKey);
    const signature = signMessage(privateKey, 'pay 10');
    assert.equal(verifyMessage(publicKey, 'pay 100', signature), false);
  });

  it('refuses a signature checked against a different key', () => {
    const otherKey = publicKeyFromHex(rfcPublic);
    assert.ok(otherKey);
    assert.equal(verifyMessage(otherKey, 'hello', signMessage(privateKey, 'hello')), false);
  });

  it('refuses a signature with one flipped bit', () => {
    assert.ok(publicKey);
    const signature = signMessage(privateKey, 'hello');
    const flipped = (Number.parseInt(signature[0] as string, 16) ^ 1).toString(16) + signature.slice(1);
    assert.equal(verifyMessage(publicKey, 'hello', flipped), false);
  });
});

describe('ed25519 malformed input is refused without throwing', () => {
  const publicKey = publicKeyFromHex(rfcPublic);

  it('returns undefined for a public key of odd length, 63 chars, 66 chars, non-hex or empty', () => {
    assert.equal(publicKeyFromHex(`${rfcPublic}a`), undefined);
    assert.equal(publicKeyFromHex(rfcPublic.slice(0, 63)), undefined);
    assert.equal(publicKeyFromHex(`${rfcPublic}ab`), undefined);
    assert.equal(publicKeyFromHex(`${rfcPublic.slice(0, 62)}zz`), undefined);
    assert.equal(publicKeyFromHex(''), undefined);
  });

  it('returns false for a signature of odd length, 127 chars, non-hex or empty', () => {
    assert.ok(publicKey);
    assert.equal(verifyMessage(publicKey, '', `${rfcSignature}0`), false);
    assert.equal(verifyMessage(publicKey, '', rfcSignature.slice(0, 127)), false);
    assert.equal(verifyMessage(publicKey, '', rfcSignature.slice(0, 126)), false);
    assert.equal(verifyMessage(publicKey, '', `${rfcSignature.slice(0, 126)}zz`), false);
    assert.equal(verifyMessage(publicKey, '', ''), false);
  });

  it('throws a clear error for a malformed seed (a configuration error)', () => {
    assert.throws(() => privateKeyFromSeed(rfcSeed.slice(0, 63)), /64 hex characters/);
    assert.throws(() => privateKeyFromSeed(`${rfcSeed.slice(0, 62)}zz`), /64 hex characters/);
  });
});

describe('messageSigner: the hot-path signer', () => {
  it('uses libsodium on this machine (the project installs its prebuilt binding)', () => {
    assert.equal(defaultSignerEngine(), 'sodium');
  });

  it('gives RFC 8032 test vector 1 with either engine', () => {
    for (const engine of ['sodium', 'node'] as const) assert.equal(messageSigner(privateKeyFromSeed(rfcSeed), engine)(new Uint8Array(0)), rfcSignature, engine);
  });

  it('signs exactly as node:crypto does, message after message, and the signatures verify', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const fast = messageSigner(privateKey);
    const reference = messageSigner(privateKey, 'node');
    for (let length = 0; length < 300; length += 7) {
      // A view into a larger buffer, as the crypto worker passes each receipt's bytes.
      const message = Buffer.from('x'.repeat(length + 5)).subarray(5);
      const signature = fast(message);
      assert.equal(signature, reference(message));
      assert.ok(verifyMessage(publicKey, message.toString('utf8'), signature));
    }
  });

  it('refuses a key that is not ed25519', () => {
    const { privateKey } = generateKeyPairSync('x25519');
    assert.throws(() => messageSigner(privateKey, 'sodium'), /ed25519 private key/);
  });
});

describe('verifyMessage through libsodium', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const nodeVerdict = (message: string, signatureHex: string) => verify(null, Buffer.from(message, 'utf8'), publicKey, Buffer.from(signatureHex, 'hex'));

  it('agrees with node:crypto on a good signature and on every single-bit change of it or of the message', () => {
    const message = 'platform-settlement-intent-v1\n{"amount":"1.000000"}';
    const signature = signMessage(privateKey, message);
    assert.equal(verifyMessage(publicKey, message, signature), true);
    for (let bit = 0; bit < 512; bit += 13) {
      const bytes = Buffer.from(signature, 'hex');
      bytes[bit >> 3] = (bytes[bit >> 3] as number) ^ (1 << (bit & 7));
      const forged = bytes.toString('hex');
      assert.equal(verifyMessage(publicKey, message, forged), false, `bit ${bit}`);
      assert.equal(nodeVerdict(message, forged), false, `bit ${bit}`);
    }
    assert.equal(verifyMessage(publicKey, message.replace('1.0', '2.0'), signature), false);
  });

  it('refuses a signature whose S is pushed past the group order (the same point, a second encoding)', () => {
    const signature = Buffer.from(signMessage(privateKey, 'hello'), 'hex');
    // S + L, little-endian, where L = 2^252 + 27742317777372353535851937790883648493.
    const order = 2n ** 252n + 27742317777372353535851937790883648493n;
    const s = BigInt(`0x${Buffer.from(signature.subarray(32)).reverse().toString('hex')}`) + order;
    const widened = Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse();
    const forged = Buffer.concat([signature.subarray(0, 32), widened]).toString('hex');
    assert.equal(verifyMessage(publicKey, 'hello', forged), false);
    assert.equal(nodeVerdict('hello', forged), false);
  });

  it('refuses the forgery under the neutral point as a public key (R the neutral point, S = 0: valid for any message by the bare equation)', () => {
    const neutral = `01${'00'.repeat(31)}`;
    const key = publicKeyFromHex(neutral);
    assert.ok(key);
    assert.equal(verifyMessage(key, 'anything', `${neutral}${'00'.repeat(32)}`), false);
  });

  it('refuses a key that is not ed25519', () => {
    const { publicKey: x25519 } = generateKeyPairSync('x25519');
    assert.equal(verifyMessage(x25519, 'hello', signMessage(privateKey, 'hello')), false);
  });
});
