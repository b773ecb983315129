import { decodeIntent, encodeIntent } from '@platform/kit/settlement-intent';

/**
 * An honest settlement intent (wire form) with one bit of its signature flipped: its shape, terms and key are its
 * signer's, so only a signature check refuses it (a mangled wire would be refused as malformed before that).
 *
 * @example const forged = forgedIntent(signedWire); // settlement answers 401 intent_invalid
 */
export function forgedIntent(wire: string): string {
  const decoded = decodeIntent(wire);
  if (!decoded.ok) throw new Error(`not an intent: ${decoded.reason}`);
  const { signature } = decoded.signed;
  const flipped = (Number.parseInt(signature[0] as string, 16) ^ 1).toString(16) + signature.slice(1);
  return encodeIntent({ ...decoded.signed, signature: flipped });
}
