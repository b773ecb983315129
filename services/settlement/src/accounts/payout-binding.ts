import { payoutBindingMessage } from '@platform/kit/payout-binding';
import { getAddress, isAddress, verifyMessage } from 'viem';

/*
 * Binding a payout address needs an EIP-191 `personal_sign` signature by that address over a message naming
 * the DID and the chain (kit `payoutBindingMessage`, which clients show to sign), so a mistyped address (one
 * nobody controls) can never receive a withdrawal, and a signature made for one DID or chain cannot bind another.
 */

export type BindingCheck = { ok: true; address: string } | { ok: false; reason: string; expectedMessage?: string };

/** Checks the address format and the signature; the address is returned in its EIP-55 checksummed form. */
export async function checkPayoutBinding(did: string, address: string, signature: string, chainId: number): Promise<BindingCheck> {
  if (!isAddress(address, { strict: false })) return { ok: false, reason: 'address must be a 0x-prefixed 20-byte hex address' };
  // A mixed-case address carries an EIP-55 checksum; a wrong one is most likely a typo.
  if (address !== address.toLowerCase() && address.slice(2) !== address.slice(2).toUpperCase() && !isAddress(address, { strict: true })) {
    return { ok: false, reason: 'address has an invalid EIP-55 checksum' };
  }
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return { ok: false, reason: 'signature must be a 65-byte hex signature (0x + 130 hex)' };
  const checksummed = getAddress(address);
  const message = payoutBindingMessage(did, checksummed, chainId);
  let valid = false;
  try {
    valid = await verifyMessage({ address: checksummed, message, signature: signature as `0x${string}` });
  } catch {
    valid = false;
  }
  return valid
    ? { ok: true, address: checksummed }
    : { ok: false, reason: 'signature is not by this address over the binding message', expectedMessage: message };
}
