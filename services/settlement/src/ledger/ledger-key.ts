import type { KeyObject } from 'node:crypto';
import { messageSigner, publicKeyHex } from '@platform/kit/auth/ed25519';
import type { NoteSigner } from '@platform/kit/receipt-log/signed-note';
import { rawPublicKey, verifierKey } from '@platform/kit/receipt-log/signed-note';

/** The sequencer's ed25519 identity: it signs receipts and, under the checkpoint origin, the log's checkpoints. */
export interface SequencerKey {
  readonly privateKey: KeyObject;
  /** Raw public key, 64 lowercase hex: the `sequencer` field of every receipt. */
  readonly publicKeyHex: string;
  /** Signs receipt bytes on the calling thread (hex), as the crypto worker signs larger groups. */
  readonly sign: (message: Uint8Array) => string;
  /** Signs checkpoints as a C2SP note under the origin. */
  readonly noteSigner: NoteSigner;
  /** `<origin>+<key id>+<base64 key>`: what a verifier needs to open a checkpoint. */
  readonly verifierKey: string;
  readonly origin: string;
}

export function sequencerKey(privateKey: KeyObject, origin: string): SequencerKey {
  return {
    privateKey,
    publicKeyHex: publicKeyHex(privateKey),
    sign: messageSigner(privateKey),
    noteSigner: { name: origin, privateKey },
    verifierKey: verifierKey(origin, rawPublicKey(privateKey)),
    origin,
  };
}
