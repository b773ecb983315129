import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { privateKeyFromSeed, publicKeyHex } from '../auth/ed25519.ts';
import { signCheckpoint } from './checkpoint.ts';
import { consistencyProof, inclusionProof, rootHash } from './merkle-log.ts';
import { type Receipt, receiptLeafHash, signReceipt } from './receipt.ts';
import { type ReceiptEvidence, verifyReceiptEvidence } from './receipt-evidence.ts';

const key = privateKeyFromSeed('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
const other = privateKeyFromSeed('1f'.repeat(32));
const origin = 'platform.settlement/log';
const keys = { sequencerPublicKey: publicKeyHex(key), origin };

const receipts: Receipt[] = Array.from({ length: 10 }, (_, index) => ({
  v: 1,
  seq: index + 1,
  kind: 'transfer',
  from: 'did:platform:alice:0123456789abcdef',
  to: 'did:platform:bob:fedcba9876543210',
  amount: `${index + 1}.000000`,
  ref: '',
  hold_id: null,
  at: '2026-01-01T00:00:00.000Z',
  sequencer: publicKeyHex(key),
}));
const leaves = receipts.map(receiptLeafHash);
const hex = (hashes: Buffer[]) => hashes.map((hash) => `0x${hash.toString('hex')}`);
const checkpointAt = (size: number, signer = key) =>
  signCheckpoint({ origin, treeSize: size, rootHash: rootHash(leaves, size) }, { name: origin, privateKey: signer });

/** Receipt 3 in the checkpoint of size 6, with the latest checkpoint (size 10) and the proof that it extends it. */
function evidence(): ReceiptEvidence {
  return {
    seq: 3,
    receipt: signReceipt(receipts[2] as Receipt, key),
    checkpoint: checkpointAt(6),
    inclusionProof: hex(inclusionProof(leaves, 2, 6)),
    latest: { checkpoint: checkpointAt(10), consistencyProof: hex(consistencyProof(leaves, 6, 10)) },
  };
}

const reasonFor = async (changed: ReceiptEvidence, trusted = keys): Promise<string> => {
  const verdict = await verifyReceiptEvidence(changed, trusted);
  assert.equal(verdict.ok, false, 'expected the evidence to be refused');
  return verdict.ok ? '' : verdict.reason;
};

describe('verifyReceiptEvidence', () => {
  it('accepts a genuine receipt, its checkpoint, inclusion proof and a consistent later checkpoint', async () => {
    const verdict = await verifyReceiptEvidence(evidence(), keys);
    assert.ok(verdict.ok);
    assert.deepEqual([verdict.receipt.seq, verdict.treeSize, verdict.latestSize], [3, 6, 10]);
    assert.equal(verdict.rootHex, `0x${rootHash(leaves, 6).toString('hex')}`);
    const alone = await verifyReceiptEvidence({ ...evidence(), latest: undefined }, keys);
    assert.ok(alone.ok && alone.latestSize === undefined);
  });

  it('names what failed: an edited receipt, another seq, another key, no batch yet', async () => {
    const edited = evidence();
    edited.receipt = { ...(edited.receipt as object), amount: '300.000000' };
    assert.equal(await reasonFor(edited), 'receipt: signature does not verify over the receipt');
    assert.match(await reasonFor({ ...evidence(), seq: 4 }), /^receipt: seq is 3, not the 4 asked for$/);
    assert.match(await reasonFor(evidence(), { ...keys, sequencerPublicKey: publicKeyHex(other) }), /^receipt: receipt.sequencer is not the expected/);
    assert.match(await reasonFor({ ...evidence(), checkpoint: null, inclusionProof: null }), /no checkpoint covers the receipt yet/);
  });

  it('refuses a checkpoint by another key or origin, a wrong inclusion proof, and a later checkpoint that forks', async () => {
    assert.equal(await reasonFor({ ...evidence(), checkpoint: checkpointAt(6, other) }), 'checkpoint: no signature by the verifier key');
    assert.equal(await reasonFor(evidence(), { ...keys, origin: 'another/log' }), 'checkpoint: no signature by the verifier key');
    assert.match(await reasonFor({ ...evidence(), inclusionProof: hex(inclusionProof(leaves, 3, 6)) }), /^inclusion proof: leaf 2 does not lead/);
    assert.match(await reasonFor({ ...evidence(), inclusionProof: ['zz'] }), /not a list of 32-byte hex hashes/);
    const forked = [...leaves.slice(0, 4), Buffer.alloc(32, 7), ...leaves.slice(5)];
    const forkedHead = signCheckpoint({ origin, treeSize: 10, rootHash: rootHash(forked) }, { name: origin, privateKey: key });
    const fork = { ...evidence(), latest: { checkpoint: forkedHead, consistencyProof: hex(consistencyProof(forked, 6, 10)) } };
    assert.match(await reasonFor(fork), /^consistency proof: the latest checkpoint \(size 10\) does not extend the receipt's \(size 6\)$/);
  });
});
