import { bytesToHex, hexToBytes, utf8, verifyEd25519 } from '../web-crypto.ts';
import { leafHashOf } from './merkle-proofs.ts';
import { checkSignedReceipt, type Receipt, type ReceiptCheck, receiptText } from './receipt-shape.ts';

/** The receipt's RFC 9162 leaf hash, SHA-256(0x00 || UTF-8 receiptText), on WebCrypto. */
export function receiptLeafHashOf(receipt: Receipt): Promise<Uint8Array> {
  return leafHashOf(utf8(receiptText(receipt)));
}

/**
 * Verifies a signed receipt (for instance straight from JSON.parse) against the sequencer key the
 * verifier trusts (64 hex, from `/v1/info`): exact shape, the receipt naming that key, and the ed25519
 * signature over receiptText's UTF-8 bytes. A key that is not a valid ed25519 point fails as a signature that does not verify. Every refusal is a returned reason.
 *
 * @example const verified = await verifyReceipt(JSON.parse(body).data, info.sequencer_public_key); if (verified.ok) use(verified.receipt)
 */
export async function verifyReceipt(signed: unknown, sequencerPublicKeyHex: string): Promise<ReceiptCheck> {
  const checked = checkSignedReceipt(signed);
  if (!checked.ok) return checked;
  const expected = typeof sequencerPublicKeyHex === 'string' ? sequencerPublicKeyHex.toLowerCase() : '';
  const publicKey = expected.length === 64 ? hexToBytes(expected) : undefined;
  if (!publicKey) return { ok: false, reason: 'the expected sequencer key is not a 32-byte ed25519 key in hex' };
  const { signature, ...receipt } = checked.signed;
  if (receipt.sequencer !== bytesToHex(publicKey)) return { ok: false, reason: 'receipt.sequencer is not the expected sequencer key' };
  const valid = await verifyEd25519(publicKey, utf8(receiptText(receipt)), hexToBytes(signature) as Uint8Array);
  return valid ? { ok: true, receipt } : { ok: false, reason: 'signature does not verify over the receipt' };
}
