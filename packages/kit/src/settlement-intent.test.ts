import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { didFor, parseDid } from './auth/did.ts';
import { privateKeyFromSeed, publicKeyHex, signMessage } from './auth/ed25519.ts';
import { canonicalJson } from './canonical-json.ts';
import {
  decodeIntent,
  defaultMaxIntentLifetimeSeconds,
  encodeIntent,
  inspectIntent,
  intentPurposes,
  intentSigningDomain,
  intentSigningText,
  maxIntentRefLength,
  maxIntentWireLength,
  newIntentNonce,
  type SettlementIntent,
  type SignedIntent,
  signIntent,
  type VerifyIntentOptions,
  verifyIntent,
} from './settlement-intent.ts';

// Seed 00 01 02 … 1f: a fixed key, so the signed bytes and the signature below are a test vector.
const seed = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join('');
const payerKey = privateKeyFromSeed(seed);
const payerPublic = publicKeyHex(payerKey);
const payerDid = didFor('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', payerPublic);
const otherKey = privateKeyFromSeed('1f'.repeat(32));
const payeeDid = 'did:platform:payee:d75a980182b10ab7';
const now = new Date('2026-01-01T00:00:00.000Z');

const baseIntent: SettlementIntent = {
  version: 1,
  from: payerDid,
  to: payeeDid,
  amount: '12.500000',
  ref: 'order-42',
  nonce: 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYX',
  expiry: '2026-01-01T00:05:00.000Z',
  purpose: 'pay',
};

const signedWith = (overrides: Partial<SettlementIntent>, key = payerKey): SignedIntent => signIntent({ ...baseIntent, ...overrides }, key);
const options = (extra?: Partial<VerifyIntentOptions>): VerifyIntentOptions => ({ now, ...extra });

/** The reason verification refuses; fails the test if it succeeds. */
function verifyRefusal(signed: SignedIntent, extra?: Partial<VerifyIntentOptions>): string {
  const result = verifyIntent(signed, options(extra));
  assert.equal(result.ok, false, 'expected verification to fail');
  return result.ok ? '' : result.reason;
}

function assertVerifies(signed: SignedIntent, extra?: Partial<VerifyIntentOptions>): void {
  const result = verifyIntent(signed, options(extra));
  assert.ok(result.ok, result.ok ? '' : result.reason);
}

/** The reason decoding refuses; fails the test if it succeeds. */
function decodeRefusal(wire: string): string {
  const result = decodeIntent(wire);
  assert.equal(result.ok, false, 'expected decoding to fail');
  return result.ok ? '' : result.reason;
}

const wireOfText = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
const wireOf = (body: unknown): string => wireOfText(canonicalJson(body));
const validBody = (): Record<string, unknown> => JSON.parse(JSON.stringify(signedWith({})));

describe('settlement intent constants', () => {
  it('fixes the domain, purposes, wire limit and default lifetime', () => {
    assert.equal(intentSigningDomain, 'platform-settlement-intent-v1\n');
    assert.deepEqual(intentPurposes, ['pay', 'hold', 'withdraw', 'invoke']);
    assert.equal(maxIntentWireLength, 4096);
    assert.equal(maxIntentRefLength, 200);
    assert.equal(defaultMaxIntentLifetimeSeconds, 3600);
  });
});

describe('settlement intent test vector (seed 000102…1f)', () => {
  const expectedJson =
    '{"amount":"12.500000","expiry":"2026-01-01T00:05:00.000Z","from":"did:platform:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:03a107bff3ce10be",' +
    '"nonce":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYX","purpose":"pay","ref":"order-42","to":"did:platform:payee:d75a980182b10ab7","version":1}';
  const expectedSignature = 'a006fdee6b3911435578a884a2b3096a85a61723e93d00276d95c6306aa3b1bd646ffc79075c70e96b87451fd67611ce0cbc5219d2a1dac76d2778f4f76f560d';
  const expectedPublic = '03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8';

  it('derives the known public key from the seed', () => {
    assert.equal(payerPublic, expectedPublic);
  });

  it('signs exactly the domain line followed by the canonical JSON', () => {
    assert.equal(intentSigningText(baseIntent), `platform-settlement-intent-v1\n${expectedJson}`);
  });

  it('produces the recorded signature', () => {
    assert.equal(signIntent(baseIntent, payerKey).signature, expectedSignature);
  });

  it('signs the same with a signer that knows its public key as with the private key object', () => {
    const signer = { publicKeyHex: payerPublic, sign: (message: string) => signMessage(payerKey, message) };
    assert.deepEqual(signIntent(baseIntent, signer), signIntent(baseIntent, payerKey));
  });

  it('encodes the wire as base64url of the canonical JSON of {intent, public_key, signature}', () => {
    const wire = encodeIntent(signIntent(baseIntent, payerKey));
    assert.match(wire, /^[A-Za-z0-9_-]+$/);
    assert.equal(
      Buffer.from(wire, 'base64url').toString('utf8'),
      `{"intent":${expectedJson},"public_key":"${expectedPublic}","signature":"${expectedSignature}"}`,
    );
  });

  it('gives the same signature and wire whatever the key order of the intent object', () => {
    const reversed = Object.fromEntries(Object.entries(baseIntent).reverse()) as unknown as SettlementIntent;
    assert.equal(signIntent(reversed, payerKey).signature, expectedSignature);
    assert.equal(encodeIntent(signIntent(reversed, payerKey)), encodeIntent(signIntent(baseIntent, payerKey)));
  });

  it('signs and encodes only the eight fields, so a stray property changes nothing', () => {
    const stray = { ...baseIntent, memo: 'not signed' } as SettlementIntent;
    assert.equal(intentSigningText(stray), intentSigningText(baseIntent));
    assert.equal(encodeIntent(signIntent(stray, payerKey)), encodeIntent(signIntent(baseIntent, payerKey)));
    const result = verifyIntent(signIntent(stray, payerKey), options());
    assert.ok(result.ok);
    assert.deepEqual(result.intent, baseIntent);
  });
});

describe('settlement intent round trip', () => {
  it('signs, encodes, decodes and verifies, returning the intent, both parties, micros and expiry', () => {
    const decoded = decodeIntent(encodeIntent(signIntent(baseIntent, payerKey)));
    assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
    assert.deepEqual(decoded.signed, { intent: baseIntent, public_key: payerPublic, signature: signIntent(baseIntent, payerKey).signature });
    const result = verifyIntent(decoded.signed, { now, expectedPurpose: 'pay' });
    assert.ok(result.ok, result.ok ? '' : result.reason);
    assert.deepEqual(result, {
      ok: true,
      intent: baseIntent,
      payer: parseDid(payerDid),
      payee: parseDid(payeeDid),
      micros: 12_500_000n,
      expiresAt: new Date('2026-01-01T00:05:00.000Z'),
    });
  });

  it('round-trips every purpose (withdraw names the payer as to)', () => {
    for (const purpose of intentPurposes) {
      const signed = signedWith({ purpose, to: purpose === 'withdraw' ? payerDid : payeeDid });
      const decoded = decodeIntent(encodeIntent(signed));
      assert.ok(decoded.ok);
      assertVerifies(decoded.signed, { expectedPurpose: purpose });
    }
  });

  it('newIntentNonce gives 32 base64url characters that verify and differ each call', () => {
    const nonce = newIntentNonce();
    assert.match(nonce, /^[A-Za-z0-9_-]{32}$/);
    assert.notEqual(newIntentNonce(), nonce);
    assertVerifies(signedWith({ nonce }));
  });
});

describe('decodeIntent refusals', () => {
  const base64Reason = 'payment intent is not canonical unpadded base64url';

  it('refuses an empty wire', () => {
    assert.equal(decodeRefusal(''), 'payment intent is empty');
  });

  it('accepts a wire of exactly the limit and refuses longer ones before decoding', () => {
    const probe = encodeIntent(signedWith({ to: 'did:platform:x:d75a980182b10ab7' }));
    // 4096 unpadded base64url characters carry exactly 3072 bytes; pad the payee label to reach them.
    const label = 'x'.repeat(1 + 3072 - Buffer.from(probe, 'base64url').length);
    const atLimit = encodeIntent(signedWith({ to: `did:platform:${label}:d75a980182b10ab7` }));
    assert.equal(atLimit.length, maxIntentWireLength);
    assert.equal(decodeIntent(atLimit).ok, true);
    const over = encodeIntent(signedWith({ to: `did:platform:${label}x:d75a980182b10ab7` }));
    assert.ok(over.length > maxIntentWireLength);
    assert.equal(decodeRefusal(over), 'payment intent is longer than 4096 characters');
    assert.equal(decodeRefusal('A'.repeat(maxIntentWireLength + 1)), 'payment intent is longer than 4096 characters');
  });

  it('refuses padding, the standard alphabet and other characters', () => {
    const wire = encodeIntent(signedWith({}));
    assert.equal(decodeRefusal(`${wire}==`), base64Reason);
    assert.equal(decodeRefusal(`${wire.slice(0, -1)}+`), base64Reason);
    assert.equal(decodeRefusal(`${wire.slice(0, -1)}/`), base64Reason);
    assert.equal(decodeRefusal(` ${wire}`), base64Reason);
    assert.equal(decodeRefusal(`${wire}.`), base64Reason);
  });

  it('refuses a spelling with stray low bits that Node would decode to the same bytes', () => {
    const wire = encodeIntent(signedWith({}));
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(wire.at(-1) as string);
    const stray = wire.slice(0, -1) + alphabet[last ^ 1];
    assert.deepEqual(Buffer.from(stray, 'base64url'), Buffer.from(wire, 'base64url'));
    assert.equal(decodeRefusal(stray), base64Reason);
  });

  it('refuses bytes that are not UTF-8, and text that is not JSON', () => {
    const reason = 'payment intent is not UTF-8 JSON';
    assert.equal(decodeRefusal(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString('base64url')), reason);
    // Invalid bytes inside a string would otherwise become U+FFFD and still parse as canonical JSON.
    const [before, after] = canonicalJson(validBody()).split('order-42') as [string, string];
    const invalidInString = Buffer.concat([Buffer.from(`${before}order-`), Buffer.from([0xff]), Buffer.from(after)]);
    assert.equal(decodeRefusal(invalidInString.toString('base64url')), reason);
    assert.equal(decodeRefusal(wireOfText('{"intent":')), reason);
    assert.equal(decodeRefusal(wireOfText('not json')), reason);
  });

  it('refuses JSON that is not an object', () => {
    for (const text of ['[]', 'null', '"x"', '1']) assert.equal(decodeRefusal(wireOfText(text)), 'payment intent must be a JSON object', text);
  });

  it('refuses each missing field', () => {
    for (const key of ['intent', 'public_key', 'signature']) {
      const body = validBody();
      delete body[key];
      assert.equal(decodeRefusal(wireOf(body)), `payment intent is missing ${key}`);
    }
    for (const key of Object.keys(baseIntent)) {
      const body = validBody();
      delete (body.intent as Record<string, unknown>)[key];
      assert.equal(decodeRefusal(wireOf(body)), `intent is missing ${key}`);
    }
  });

  it('refuses unknown fields, outside and inside the intent', () => {
    assert.equal(decodeRefusal(wireOf({ ...validBody(), extra: 1 })), 'payment intent has unknown field extra');
    const body = validBody();
    body.intent = { ...(body.intent as object), memo: 'x' };
    assert.equal(decodeRefusal(wireOf(body)), 'intent has unknown field memo');
  });

  it('refuses wrong types and out-of-list values', () => {
    const intentCases: Array<[string, unknown, string]> = [
      ['version', '1', 'intent.version must be the number 1'],
      ['version', 2, 'intent.version must be the number 1'],
      ['from', 5, 'intent.from must be a string'],
      ['to', null, 'intent.to must be a string'],
      ['amount', 12.5, 'intent.amount must be a string'],
      ['ref', null, 'intent.ref must be a string'],
      ['nonce', [], 'intent.nonce must be a string'],
      ['expiry', 1767225900, 'intent.expiry must be a string'],
      ['purpose', 'refund', 'intent.purpose must be one of pay, hold, withdraw, invoke'],
    ];
    for (const [key, value, reason] of intentCases) {
      const body = validBody();
      body.intent = { ...(body.intent as object), [key]: value };
      assert.equal(decodeRefusal(wireOf(body)), reason, key);
    }
    const valid = validBody();
    const outerCases: Array<[Record<string, unknown>, string]> = [
      [{ intent: 'x' }, 'intent must be an object'],
      [{ intent: [] }, 'intent must be an object'],
      [{ public_key: (valid.public_key as string).toUpperCase() }, 'public_key must be 64 lowercase hex characters'],
      [{ public_key: (valid.public_key as string).slice(2) }, 'public_key must be 64 lowercase hex characters'],
      [{ public_key: 1 }, 'public_key must be 64 lowercase hex characters'],
      [{ signature: (valid.signature as string).toUpperCase() }, 'signature must be 128 lowercase hex characters'],
      [{ signature: `${valid.signature}00` }, 'signature must be 128 lowercase hex characters'],
    ];
    for (const [change, reason] of outerCases) assert.equal(decodeRefusal(wireOf({ ...validBody(), ...change })), reason, JSON.stringify(change));
  });

  it('refuses JSON that is not canonical: whitespace, key order, number spelling, duplicate keys', () => {
    const reason = 'payment intent JSON is not in RFC 8785 canonical form';
    const text = canonicalJson(validBody());
    assert.equal(decodeIntent(wireOfText(text)).ok, true);
    assert.equal(decodeRefusal(wireOfText(JSON.stringify(validBody(), null, 1))), reason);
    assert.equal(decodeRefusal(wireOfText(JSON.stringify(validBody()))), reason);
    assert.equal(decodeRefusal(wireOfText(text.replace('"version":1', '"version":1.0'))), reason);
    // A parser that keeps the first duplicate would see 99.000000; ours keeps the last. Refuse both readings.
    assert.equal(decodeRefusal(wireOfText(text.replace('{"amount":', '{"amount":"99.000000","amount":'))), reason);
    // A lone surrogate has no canonical form: refused as such, not thrown (it was a 500 where the wire came in).
    assert.equal(decodeRefusal(wireOfText(text.replace('"to":"did:platform:', '"to":"did:platform:\\ud800'))), reason);
  });
});

describe('verifyIntent refusals', () => {
  it('refuses a version other than 1', () => {
    assert.equal(verifyRefusal(signedWith({ version: 2 as 1 })), 'intent.version must be the number 1');
  });

  it('refuses malformed payer and payee DIDs', () => {
    assert.equal(verifyRefusal(signedWith({ from: 'did:platform:x' })), 'intent.from is not a well-formed DID');
    assert.equal(verifyRefusal(signedWith({ to: `${payeeDid}0` })), 'intent.to is not a well-formed DID');
  });

  it('refuses invalid amounts with the money reason, zero included', () => {
    assert.equal(verifyRefusal(signedWith({ amount: '0' })), 'intent.amount: amount must be greater than zero');
    assert.equal(verifyRefusal(signedWith({ amount: '1.0000001' })), 'intent.amount: amount has more than 6 decimal places');
    assert.equal(verifyRefusal(signedWith({ amount: '-1' })), 'intent.amount: amount must not carry a sign');
    assert.equal(verifyRefusal(signedWith({ amount: '1000000000.000001' })), 'intent.amount: amount is above the maximum of 1000000000.000000');
    assertVerifies(signedWith({ amount: '0.000001' }));
  });

  it('accepts a ref of 0 to 200 printable ASCII characters and refuses longer or other characters', () => {
    const reason = 'intent.ref must be printable ASCII of at most 200 characters';
    assertVerifies(signedWith({ ref: '' }));
    assertVerifies(signedWith({ ref: `0x${'ab'.repeat(32)}` }));
    assertVerifies(signedWith({ ref: '~'.repeat(200) }));
    assert.equal(verifyRefusal(signedWith({ ref: 'a'.repeat(201) })), reason);
    assert.equal(verifyRefusal(signedWith({ ref: 'line\nbreak' })), reason);
    assert.equal(verifyRefusal(signedWith({ ref: 'café' })), reason);
  });

  it('accepts a nonce of 16 to 64 base64url characters only', () => {
    const reason = 'intent.nonce must be 16 to 64 base64url characters';
    assertVerifies(signedWith({ nonce: 'A'.repeat(16) }));
    assertVerifies(signedWith({ nonce: '-_'.repeat(32) }));
    assert.equal(verifyRefusal(signedWith({ nonce: 'A'.repeat(15) })), reason);
    assert.equal(verifyRefusal(signedWith({ nonce: 'A'.repeat(65) })), reason);
    assert.equal(verifyRefusal(signedWith({ nonce: `${'A'.repeat(15)}+` })), reason);
    assert.equal(verifyRefusal(signedWith({ nonce: `${'A'.repeat(15)}=` })), reason);
  });

  it('accepts strict ISO 8601 UTC expiries and refuses other spellings and impossible dates', () => {
    const reason = 'intent.expiry must be an ISO 8601 UTC time such as 2026-01-01T00:00:00Z';
    assertVerifies(signedWith({ expiry: '2026-01-01T00:05:00Z' }));
    assertVerifies(signedWith({ expiry: '2026-01-01T00:05:00.5Z' }));
    for (const expiry of [
      '2026-01-01T00:05:00+00:00',
      '2026-01-01 00:05:00Z',
      '2026-01-01T00:05Z',
      '2026-01-01T00:05:00.0000Z',
      '2026-01-01t00:05:00z',
      '2026-02-30T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '1767225900',
      '',
    ]) {
      assert.equal(verifyRefusal(signedWith({ expiry })), reason, expiry);
    }
  });

  it('refuses a purpose outside the list, or other than the expected one', () => {
    assert.equal(verifyRefusal(signedWith({ purpose: 'refund' as 'pay' })), 'intent.purpose must be one of pay, hold, withdraw, invoke');
    assert.equal(verifyRefusal(signedWith({ purpose: 'hold' }), { expectedPurpose: 'pay' }), 'intent.purpose is hold, expected pay');
    assert.equal(verifyRefusal(signedWith({ purpose: 'pay' }), { expectedPurpose: 'invoke' }), 'intent.purpose is pay, expected invoke');
  });

  it('refuses a withdraw that names someone else as to', () => {
    assert.equal(verifyRefusal(signedWith({ purpose: 'withdraw' })), 'a withdraw intent must name the payer as to');
  });

  it('refuses a public key that is not an ed25519 key', () => {
    const signed = signedWith({});
    assert.equal(verifyRefusal({ ...signed, public_key: 'zz'.repeat(32) }), 'public_key is not a 32-byte ed25519 key in hex');
    assert.equal(verifyRefusal({ ...signed, public_key: signed.public_key.slice(2) }), 'public_key is not a 32-byte ed25519 key in hex');
  });

  it('refuses a key whose fingerprint differs from the payer DID, though its own signature is valid', () => {
    assert.equal(verifyRefusal(signedWith({}, otherKey)), 'public_key does not match the key fingerprint of intent.from');
  });

  it('compares the fingerprint case-insensitively, as the handshake does', () => {
    assertVerifies(signedWith({ from: payerDid.replace(/:([0-9a-f]{16})$/, (_, fp: string) => `:${fp.toUpperCase()}`) }));
  });

  it('refuses the payer key presented with a signature by another key', () => {
    const forged = { ...signedWith({}), signature: signedWith({}, otherKey).signature };
    assert.equal(verifyRefusal(forged), 'signature does not verify over the intent');
  });

  it('refuses tampering with any field after signing', () => {
    const signed = signedWith({});
    const tampered: Array<[string, Partial<SettlementIntent>]> = [
      // Same fingerprint, other label: passes the fingerprint check, so only the signature can catch it.
      ['from', { from: didFor('someone-else', payerPublic) }],
      ['to', { to: 'did:platform:thief:d75a980182b10ab7' }],
      ['amount', { amount: '125.000000' }],
      // The same value spelled differently is still different signed bytes.
      ['amount spelling', { amount: '12.5' }],
      ['ref', { ref: 'order-43' }],
      ['nonce', { nonce: 'BAECAwQFBgcICQoLDA0ODxAREhMUFRYX' }],
      ['expiry', { expiry: '2026-01-01T00:04:59.000Z' }],
      ['purpose', { purpose: 'hold' }],
    ];
    for (const [name, change] of tampered) {
      assert.equal(verifyRefusal({ ...signed, intent: { ...signed.intent, ...change } }), 'signature does not verify over the intent', name);
    }
    assert.equal(verifyRefusal({ ...signed, intent: { ...signed.intent, version: 2 as 1 } }), 'intent.version must be the number 1');
    const flipped = (Number.parseInt(signed.signature[0] as string, 16) ^ 1).toString(16) + signed.signature.slice(1);
    assert.equal(verifyRefusal({ ...signed, signature: flipped }), 'signature does not verify over the intent');
    assert.equal(verifyRefusal({ ...signed, public_key: publicKeyHex(otherKey) }), 'public_key does not match the key fingerprint of intent.from');
  });

  it('treats now == expiry as expired, and a millisecond before as valid', () => {
    const expiry = new Date(baseIntent.expiry);
    assertVerifies(signedWith({}), { now: new Date(expiry.getTime() - 1) });
    assert.equal(verifyRefusal(signedWith({}), { now: expiry }), 'intent has expired');
    assert.equal(verifyRefusal(signedWith({}), { now: new Date(expiry.getTime() + 86_400_000) }), 'intent has expired');
  });

  it('refuses an expiry further ahead than the lifetime, by default 3600 s', () => {
    assertVerifies(signedWith({ expiry: '2026-01-01T01:00:00.000Z' }));
    assert.equal(verifyRefusal(signedWith({ expiry: '2026-01-01T01:00:00.001Z' })), 'intent.expiry is more than 3600 s ahead');
    assert.equal(verifyRefusal(signedWith({ expiry: '2026-01-08T00:00:00Z' })), 'intent.expiry is more than 3600 s ahead');
    assertVerifies(signedWith({ expiry: '2026-01-01T00:01:00Z' }), { maxLifetimeSeconds: 60 });
    assert.equal(verifyRefusal(signedWith({ expiry: '2026-01-01T00:01:01Z' }), { maxLifetimeSeconds: 60 }), 'intent.expiry is more than 60 s ahead');
  });

  it('checks in order: version, DIDs, amount, purpose, key, signature, expiry', () => {
    const bad = signedWith({ version: 2 as 1, from: 'nope' });
    assert.equal(verifyRefusal(bad), 'intent.version must be the number 1');
    assert.equal(verifyRefusal(signedWith({ from: 'nope', amount: 'x' })), 'intent.from is not a well-formed DID');
    assert.equal(verifyRefusal(signedWith({ amount: 'x', purpose: 'refund' as 'pay' })), 'intent.amount: amount must be a decimal number such as 12.5');
    assert.equal(verifyRefusal(signedWith({ purpose: 'hold' }, otherKey), { expectedPurpose: 'pay' }), 'intent.purpose is hold, expected pay');
    const expiredAndForged = { ...signedWith({ expiry: '2025-01-01T00:00:00Z' }), signature: signedWith({}).signature };
    assert.equal(verifyRefusal(expiredAndForged), 'signature does not verify over the intent');
    assert.equal(verifyRefusal(signedWith({ expiry: '2025-01-01T00:00:00Z' }, otherKey)), 'public_key does not match the key fingerprint of intent.from');
  });
});

describe('inspectIntent', () => {
  it('makes every check of verifyIntent except the signature', () => {
    const signed = signedWith({});
    const tampered = { ...signed, intent: { ...signed.intent, amount: '99.000000' } };
    assert.equal(verifyRefusal(tampered), 'signature does not verify over the intent');
    const inspected = inspectIntent(tampered, options());
    assert.equal(inspected.ok && inspected.micros, 99_000_000n);
    const refusal = (candidate: SignedIntent, extra?: Partial<VerifyIntentOptions>) => {
      const result = inspectIntent(candidate, options(extra));
      return result.ok ? 'accepted' : result.reason;
    };
    assert.equal(refusal(signedWith({ amount: '0' })), 'intent.amount: amount must be greater than zero');
    assert.equal(refusal({ ...signed, public_key: publicKeyHex(otherKey) }), 'public_key does not match the key fingerprint of intent.from');
    assert.equal(refusal(signedWith({ purpose: 'hold' }), { expectedPurpose: 'pay' }), 'intent.purpose is hold, expected pay');
    assert.equal(refusal(signed, { now: new Date(baseIntent.expiry) }), 'intent has expired');
  });
});
