import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { privateKeyFromSeed, publicKeyHex } from '../auth/ed25519.ts';
import { openCheckpoint, signCheckpoint, verifierKey } from './checkpoint.ts';
import { inclusionProof, rootHash, verifyInclusion } from './merkle-log.ts';
import {
  checkReceipt,
  checkSignedReceipt,
  type Receipt,
  receiptBytes,
  receiptKinds,
  receiptLeafHash,
  receiptSigningDomain,
  type SignedReceipt,
  signReceipt,
  verifyReceipt,
} from './receipt.ts';
import { rawPublicKey } from './signed-note.ts';

// RFC 8032 section 7.1 TEST 1 secret key; its public key is d75a9801…511a.
const seed = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const sequencerKey = privateKeyFromSeed(seed);
const sequencer = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const otherKey = privateKeyFromSeed('1f'.repeat(32));
const alice = 'did:platform:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:0123456789abcdef';
const bob = 'did:platform:bob:fedcba9876543210';
const carol = 'did:platform:carol:00112233aabbccdd';
const holdId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

const capture: Receipt = {
  v: 1,
  seq: 42,
  kind: 'capture',
  from: alice,
  to: bob,
  amount: '12.500000',
  ref: 'order-42',
  hold_id: holdId,
  at: '2026-01-01T00:00:00.123Z',
  sequencer,
};
const deposit: Receipt = { ...capture, seq: 1, kind: 'deposit', from: null, amount: '100.000000', ref: '0xabc:0', hold_id: null };

// Canonical texts written out by hand from RFC 8785 (keys sorted by UTF-16 code units, no whitespace);
// signatures cross-checked once with Python's `cryptography` package over the same bytes.
const vectors = [
  {
    name: 'capture',
    receipt: capture,
    text:
      '{"amount":"12.500000","at":"2026-01-01T00:00:00.123Z","from":"did:platform:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b:0123456789abcdef",' +
      '"hold_id":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","kind":"capture","ref":"order-42","seq":42,' +
      '"sequencer":"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a","to":"did:platform:bob:fedcba9876543210","v":1}',
    signature: 'fd975e795fb5c69e132ed3322fba06d8c9042e56c16e602ff8f823946e96f936944a0ba498a28e781b6caf3ed4c47207d411ff0b5e038de0606d9231ed252808',
    leafHash: '69b42de087d772f4c0c0f61b93da0e29effaf99aedf3b1a15db55266bb2c10fa',
  },
  {
    name: 'deposit',
    receipt: deposit,
    text:
      '{"amount":"100.000000","at":"2026-01-01T00:00:00.123Z","from":null,"hold_id":null,"kind":"deposit","ref":"0xabc:0","seq":1,' +
      '"sequencer":"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a","to":"did:platform:bob:fedcba9876543210","v":1}',
    signature: 'd475ee30ba04fb10b5c20a6a4205d91a52ca1e8fdcdfb6198cbe71d795037d0ebbad28e69315ab0454c02263a6bf635aa42a88d72a6b408bc665f6eac1ed4d00',
    leafHash: '2e874ab8531d34542545a283f23002547f60ea76f9d9b117355dc2160ead6dcf',
  },
];

/** The reason checkReceipt refuses; fails the test if it accepts. */
function refusal(value: unknown): string {
  const checked = checkReceipt(value);
  assert.equal(checked.ok, false, 'expected the receipt to be refused');
  return checked.ok ? '' : checked.reason;
}

const refusedBy = async (signed: unknown, key = sequencer): Promise<string> => {
  const verified = await verifyReceipt(signed, key);
  assert.equal(verified.ok, false, 'expected verification to fail');
  return verified.ok ? '' : verified.reason;
};

describe('receipt format', () => {
  it('fixes the domain and the kinds', async () => {
    assert.equal(receiptSigningDomain, 'platform-settlement-receipt-v1\n');
    assert.deepEqual(receiptKinds, ['deposit', 'transfer', 'hold', 'capture', 'release', 'expire', 'withdraw']);
    assert.equal(publicKeyHex(sequencerKey), sequencer);
  });

  for (const vector of vectors) {
    it(`${vector.name}: literal canonical bytes, signature and leaf hash`, async () => {
      const bytes = receiptBytes(vector.receipt);
      assert.equal(bytes.toString('utf8'), `platform-settlement-receipt-v1\n${vector.text}`);
      const signed = signReceipt(vector.receipt, sequencerKey);
      assert.equal(signed.signature, vector.signature);
      assert.equal(receiptLeafHash(vector.receipt).toString('hex'), vector.leafHash);
      // The leaf is RFC 9162's SHA-256(0x00 || bytes), computed here without merkle-log.ts.
      assert.equal(createHash('sha256').update(Buffer.of(0)).update(bytes).digest('hex'), vector.leafHash);
    });
  }

  it('does not depend on key order, and leaves the signature and stray properties out of the bytes', async () => {
    const reordered = Object.fromEntries(Object.entries(capture).reverse()) as unknown as Receipt;
    assert.equal(receiptBytes(reordered).toString(), receiptBytes(capture).toString());
    const signed = signReceipt(capture, sequencerKey);
    const stray = { ...signed, batch: 7 } as unknown as Receipt;
    assert.equal(receiptBytes(signed).toString(), receiptBytes(capture).toString());
    assert.equal(receiptBytes(stray).toString(), receiptBytes(capture).toString());
    assert.deepEqual(receiptLeafHash(signed), receiptLeafHash(capture));
  });

  it('writes the largest seq, 2^53 - 1, as exact decimal', async () => {
    const last = { ...capture, seq: Number.MAX_SAFE_INTEGER };
    assert.equal(checkReceipt(last).ok, true);
    assert.match(receiptBytes(last).toString(), /"seq":9007199254740991,/);
  });
});

describe('receipt validation', () => {
  const transfer: Receipt = { ...capture, kind: 'transfer', hold_id: null };
  const withdraw: Receipt = { ...capture, kind: 'withdraw', to: null, hold_id: null };

  it('accepts every kind with its own pattern of from, to and hold_id', async () => {
    const valid: Receipt[] = [deposit, transfer, withdraw, ...(['hold', 'capture', 'release', 'expire'] as const).map((kind) => ({ ...capture, kind }))];
    assert.deepEqual(valid.map((r) => r.kind).sort(), [...receiptKinds].sort());
    for (const receipt of valid) assert.deepEqual(checkReceipt(receipt), { ok: true, receipt }, receipt.kind);
  });

  it('refuses a party or hold id where the kind forbids it, and a missing one where it needs it', async () => {
    assert.equal(refusal({ ...deposit, from: alice }), 'receipt.from must be null for this kind');
    assert.equal(refusal({ ...withdraw, to: bob }), 'receipt.to must be null for this kind');
    assert.equal(refusal({ ...transfer, to: null }), 'receipt.to must be a well-formed DID');
    assert.equal(refusal({ ...transfer, from: null }), 'receipt.from must be a well-formed DID');
    assert.equal(refusal({ ...capture, from: null }), 'receipt.from must be a well-formed DID');
    assert.equal(refusal({ ...transfer, hold_id: holdId }), 'receipt.hold_id must be null for this kind');
    assert.equal(refusal({ ...deposit, hold_id: holdId }), 'receipt.hold_id must be null for this kind');
    for (const kind of ['hold', 'capture', 'release', 'expire']) {
      assert.equal(refusal({ ...capture, kind, hold_id: null }), 'receipt.hold_id must be a lowercase UUID for this kind', kind);
    }
    assert.equal(refusal({ ...capture, hold_id: holdId.toUpperCase() }), 'receipt.hold_id must be a lowercase UUID for this kind');
    assert.equal(refusal({ ...transfer, to: alice }), 'receipt.from and receipt.to must differ');
    assert.equal(refusal({ ...capture, to: alice }), 'receipt.from and receipt.to must differ');
  });

  it('refuses malformed DIDs, including a lone surrogate that canonical JSON cannot carry', async () => {
    for (const did of ['did:platform:bob', 'did:web:bob:fedcba9876543210', `did:platform:b\ud800b:fedcba9876543210`, 42]) {
      assert.equal(refusal({ ...transfer, to: did }), 'receipt.to must be a well-formed DID', String(did));
    }
  });

  it('refuses an amount that is zero, not a string, or not written with exactly 6 places', async () => {
    assert.equal(refusal({ ...capture, amount: '12.5' }), 'receipt.amount must have exactly 6 decimal places');
    assert.equal(refusal({ ...capture, amount: '12' }), 'receipt.amount must have exactly 6 decimal places');
    assert.equal(refusal({ ...capture, amount: '0.000000' }), 'receipt.amount: amount must be greater than zero');
    assert.equal(refusal({ ...capture, amount: 12.5 }), 'receipt.amount: amount must be a decimal string, got a number');
    assert.equal(refusal({ ...capture, amount: '1000000000.000001' }), 'receipt.amount: amount is above the maximum of 1000000000.000000');
  });

  it('refuses a seq that is not an integer from 1 to 2^53 - 1', async () => {
    for (const seq of [0, -1, 1.5, 2 ** 53, Number.NaN, '7', 7n]) {
      assert.equal(refusal({ ...capture, seq }), 'receipt.seq must be an integer from 1 to 2^53 - 1', String(seq));
    }
  });

  it('refuses a time that is not UTC with exactly three fractional digits, or is not a real instant', async () => {
    for (const at of [
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.12Z',
      '2026-01-01T00:00:00.123+00:00',
      '2026-02-30T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      0,
    ]) {
      assert.equal(refusal({ ...capture, at }), 'receipt.at must be ISO 8601 UTC with milliseconds, such as 2026-01-01T00:00:00.000Z', String(at));
    }
  });

  it('refuses a ref outside printable ASCII or over 200 characters, and accepts the empty ref', async () => {
    assert.equal(checkReceipt({ ...capture, ref: '' }).ok, true);
    assert.equal(checkReceipt({ ...capture, ref: 'x'.repeat(200) }).ok, true);
    for (const ref of ['x'.repeat(201), 'caf\u00e9', 'a\nb', null]) {
      assert.equal(refusal({ ...capture, ref }), 'receipt.ref must be printable ASCII of at most 200 characters', String(ref));
    }
  });

  it('refuses another version, an unknown kind, an uppercase sequencer key, missing or unknown fields, and non-objects', async () => {
    assert.equal(refusal({ ...capture, v: 2 }), 'receipt.v must be the number 1');
    assert.equal(refusal({ ...capture, kind: 'mint' }), `receipt.kind must be one of ${receiptKinds.join(', ')}`);
    assert.equal(refusal({ ...capture, sequencer: sequencer.toUpperCase() }), 'receipt.sequencer must be 64 lowercase hex characters');
    const { ref: _ref, ...withoutRef } = capture;
    assert.equal(refusal(withoutRef), 'receipt is missing ref');
    assert.equal(refusal({ ...capture, batch: 3 }), 'receipt has unknown field batch');
    assert.equal(refusal({ ...capture, signature: 'ab' }), 'receipt has unknown field signature');
    for (const value of [null, [], 'receipt', 42]) assert.equal(refusal(value), 'receipt must be a JSON object');
  });
});

describe('receipt signatures', () => {
  const signed = signReceipt(capture, sequencerKey);

  it('verifies what it signed, also after a JSON round trip', async () => {
    assert.deepEqual(await verifyReceipt(signed, sequencer), { ok: true, receipt: capture });
    assert.deepEqual(await verifyReceipt(JSON.parse(JSON.stringify(signed)), sequencer.toUpperCase()), { ok: true, receipt: capture });
    assert.deepEqual(checkSignedReceipt(signed), { ok: true, signed });
  });

  it('refuses to sign an invalid receipt or one naming another key', async () => {
    assert.throws(() => signReceipt({ ...capture, amount: '12.5' }, sequencerKey), /invalid receipt: receipt.amount must have exactly 6 decimal places/);
    assert.throws(() => signReceipt(capture, otherKey), /not the public key of the signing key/);
  });

  it('fails when any field is changed to another valid value', async () => {
    const tampered: Partial<Receipt>[] = [
      { seq: 43 },
      { kind: 'release' },
      { kind: 'expire' },
      { from: carol },
      { to: carol },
      { amount: '12.500001' },
      { ref: 'order-43' },
      { ref: '' },
      { hold_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c' },
      { at: '2026-01-01T00:00:00.124Z' },
    ];
    for (const change of tampered) {
      const forged = { ...signed, ...change };
      assert.equal(checkSignedReceipt(forged).ok, true, JSON.stringify(change));
      assert.equal(await refusedBy(forged), 'signature does not verify over the receipt', JSON.stringify(change));
    }
    assert.equal(await refusedBy({ ...signed, v: 2 }), 'receipt.v must be the number 1');
  });

  it('fails when any bit of the signature is flipped', async () => {
    const bytes = Buffer.from(signed.signature, 'hex');
    for (let i = 0; i < 64; i++) {
      for (const bit of [0x01, 0x80]) {
        const copy = Buffer.from(bytes);
        copy[i] = (copy[i] as number) ^ bit;
        assert.equal(await refusedBy({ ...signed, signature: copy.toString('hex') }), 'signature does not verify over the receipt', `byte ${i} bit ${bit}`);
      }
    }
  });

  it('refuses a receipt from another key, even one that names that key, and checks the expected key', async () => {
    const other = publicKeyHex(otherKey);
    const forged = signReceipt({ ...capture, sequencer: other }, otherKey);
    assert.equal(await refusedBy(forged), 'receipt.sequencer is not the expected sequencer key');
    assert.equal((await verifyReceipt(forged, other)).ok, true);
    // Our signature under a receipt that claims the other key: the key check fires first, the signature fails under the other key.
    assert.equal(await refusedBy({ ...signed, sequencer: other }), 'receipt.sequencer is not the expected sequencer key');
    assert.equal(await refusedBy({ ...signed, sequencer: other }, other), 'signature does not verify over the receipt');
    for (const key of ['', 'zz'.repeat(32), sequencer.slice(2)]) {
      assert.equal(await refusedBy(signed, key), 'the expected sequencer key is not a 32-byte ed25519 key in hex', key);
    }
  });

  it('refuses a signature that is not 128 lowercase hex, or is missing', async () => {
    for (const signature of [signed.signature.toUpperCase(), signed.signature.slice(2), `${signed.signature}00`, 7]) {
      assert.equal(await refusedBy({ ...signed, signature }), 'receipt.signature must be 128 lowercase hex characters', String(signature));
    }
    assert.equal(await refusedBy(capture), 'receipt is missing signature');
  });
});

describe('receipt: end to end, receipt + inclusion proof + checkpoint', () => {
  const origin = 'settlement.example/receipts';
  const vkey = verifierKey(origin, rawPublicKey(sequencerKey));
  const at = (i: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  const hold = (seq: number, kind: Receipt['kind'], h: string): Receipt => ({
    ...capture,
    seq,
    kind,
    hold_id: `0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a${h}`,
    at: at(seq),
  });
  const plan: Receipt[] = [
    { ...deposit, seq: 1, to: alice, at: at(1) },
    { ...deposit, seq: 2, to: bob, at: at(2) },
    { ...capture, seq: 3, kind: 'transfer', hold_id: null, at: at(3) },
    hold(4, 'hold', '01'),
    hold(5, 'capture', '01'),
    hold(6, 'hold', '02'),
    hold(7, 'release', '02'),
    hold(8, 'hold', '03'),
    hold(9, 'expire', '03'),
    { ...capture, seq: 10, kind: 'withdraw', from: bob, to: null, hold_id: null, at: at(10) },
  ];
  // The sequencer's side: sign, log, checkpoint.
  const issued = plan.map((receipt) => signReceipt(receipt, sequencerKey));
  const leaves = issued.map(receiptLeafHash);
  const note = signCheckpoint({ origin, treeSize: leaves.length, rootHash: rootHash(leaves) }, { name: origin, privateKey: sequencerKey });
  const proofOf7 = inclusionProof(leaves, 6).map((hash) => hash.toString('hex'));

  /** The third party's side: only the receipt's JSON, the proof, the checkpoint note and the published keys. */
  async function proves(wire: string, proofHex: string[], index?: number): Promise<boolean> {
    const checkpoint = await openCheckpoint(note, vkey);
    assert.ok(checkpoint.ok && checkpoint.origin === origin);
    const verified = await verifyReceipt(JSON.parse(wire) as SignedReceipt, sequencer);
    if (!verified.ok) return false;
    const proof = proofHex.map((hash) => Buffer.from(hash, 'hex'));
    return verifyInclusion(receiptLeafHash(verified.receipt), index ?? verified.receipt.seq - 1, checkpoint.treeSize, proof, checkpoint.rootHash);
  }

  it('proves receipt 7 is leaf 6 of the signed ten-leaf checkpoint', async () => {
    assert.deepEqual(
      issued.map((r) => r.kind),
      ['deposit', 'deposit', 'transfer', 'hold', 'capture', 'hold', 'release', 'hold', 'expire', 'withdraw'],
    );
    assert.equal(await proves(JSON.stringify(issued[6]), proofOf7), true);
  });

  it('fails for a tampered receipt 7: its signature fails, and its leaf is not in the signed tree', async () => {
    const tampered = { ...(issued[6] as SignedReceipt), amount: '12.600000' };
    assert.equal(await proves(JSON.stringify(tampered), proofOf7), false);
    // Even with the signature check bypassed, the tampered leaf is not in the signed tree.
    const checkpoint = await openCheckpoint(note, vkey);
    assert.ok(checkpoint.ok);
    const proof = proofOf7.map((hash) => Buffer.from(hash, 'hex'));
    assert.equal(await verifyInclusion(receiptLeafHash(issued[6] as SignedReceipt), 6, checkpoint.treeSize, proof, checkpoint.rootHash), true);
    assert.equal(await verifyInclusion(receiptLeafHash(tampered), 6, checkpoint.treeSize, proof, checkpoint.rootHash), false);
  });

  it('fails for another genuine receipt with 7’s proof, and for receipt 7 at the wrong index', async () => {
    assert.equal(await proves(JSON.stringify(issued[5]), proofOf7), false);
    assert.equal(await proves(JSON.stringify(issued[6]), proofOf7, 7), false);
  });
});
