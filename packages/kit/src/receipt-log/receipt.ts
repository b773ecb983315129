import { type KeyObject, sign } from 'node:crypto';
import { publicKeyHex } from '../auth/ed25519.ts';
import { leafHash } from './merkle-log.ts';
import { checkReceipt, type Receipt, receiptText, type SignedReceipt } from './receipt-shape.ts';

/** Signing receipts and hashing them into the log (settlement, on node:crypto); the shape is receipt-shape.ts, verifying receipt-verify.ts. */

export * from './receipt-shape.ts';
export { verifyReceipt } from './receipt-verify.ts';

/** The bytes of receiptText: what is signed, and the receipt log's leaf data. */
export function receiptBytes(receipt: Receipt): Buffer {
  return Buffer.from(receiptText(receipt), 'utf8');
}

/**
 * The receipt's RFC 9162 leaf hash in the receipt log, SHA-256(0x00 || receiptBytes): with an inclusion
 * proof for leaf index `seq - 1` and a signed checkpoint, the receipt alone proves its inclusion.
 *
 * @example verifyInclusion(receiptLeafHash(receipt), receipt.seq - 1, checkpoint.treeSize, proof, checkpoint.rootHash)
 */
export function receiptLeafHash(receipt: Receipt): Buffer {
  return leafHash(receiptBytes(receipt));
}

/**
 * Signs a receipt with the sequencer's key. Throws when the receipt is invalid or names another key as
 * its sequencer: the sequencer builds receipts itself, so either is a bug, never an expected failure.
 *
 * @example const signed = signReceipt({ v: 1, seq, kind: 'transfer', …, sequencer: publicKeyHex(key) }, key)
 */
export function signReceipt(receipt: Receipt, privateKey: KeyObject): SignedReceipt {
  const checked = checkReceipt(receipt);
  if (!checked.ok) throw new Error(`cannot sign an invalid receipt: ${checked.reason}`);
  if (publicKeyHex(privateKey) !== receipt.sequencer) throw new Error('receipt.sequencer is not the public key of the signing key');
  const { v, seq, kind, from, to, amount, ref, hold_id, at, sequencer } = receipt;
  const signature = sign(null, receiptBytes(receipt), privateKey).toString('hex');
  return { v, seq, kind, from, to, amount, ref, hold_id, at, sequencer, signature };
}
