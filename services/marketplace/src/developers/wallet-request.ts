import { bodyDigest, canonicalRequestText } from '@platform/client/wallet-request';
import { getAddress, type Hex, isAddress, recoverMessageAddress } from 'viem';

export { bodyDigest, canonicalRequestText, signWalletRequest, type WalletRequest, walletRequestPrefix } from '@platform/client/wallet-request';

/**
 * `Authorization: Wallet <signature>` for programmatic developer calls. To reproduce it in another language:
 *
 * 1. Pick `timestamp` (unix seconds, now) and `nonce` (16–64 characters of `A-Z a-z 0-9 _ -`, new per request).
 * 2. Build the canonical text, six lines joined by `\n` (no trailing newline):
 *
 *        platform-marketplace-request-v1
 *        <METHOD, upper case>
 *        <path and query exactly as sent on the request line, e.g. /v1/services/abc?x=1>
 *        <lowercase hex SHA-256 of the exact body bytes; of zero bytes when there is no body>
 *        <timestamp, decimal>
 *        <nonce>
 *
 * 3. Sign it as an EIP-191 personal message (`personal_sign`: keccak256 of `"\x19Ethereum Signed Message:\n" +
 *    <byte length of the UTF-8 text, decimal> + text`) with the developer's secp256k1 key: 65 bytes r‖s‖v, 0x hex.
 * 4. Send `Authorization: Wallet 0x<130 hex>`, `X-Wallet-Address: <0x address>`, `X-Wallet-Timestamp` and
 *    `X-Wallet-Nonce`.
 *
 * The marketplace accepts a timestamp within ±60 s of its clock and each nonce once per address while that
 * window lasts (a replay inside it is refused; one outside it fails the timestamp check).
 */
export const walletClockSkewSeconds = 60;
const noncePattern = /^[A-Za-z0-9_-]{16,64}$/;

export const emptyBodyDigest = bodyDigest(undefined);

export type WalletCheck = { ok: true; address: string; nonce: string; timestamp: number } | { ok: false; reason: string };

type Headers = Record<string, string | string[] | undefined>;
const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
};

/** Checks the headers, the clock window and the signature; the nonce is claimed afterwards by the caller. */
export async function checkWalletRequest(
  headers: Headers,
  request: { method: string; pathWithQuery: string; bodySha256: string },
  nowUnix: number,
): Promise<WalletCheck> {
  const signature = /^Wallet\s+(0x[0-9a-fA-F]{130})$/.exec(header(headers, 'authorization') ?? '')?.[1];
  if (!signature) return { ok: false, reason: 'Authorization: Wallet must carry 0x followed by 65 bytes of hex (personal_sign)' };
  const address = header(headers, 'x-wallet-address');
  if (!address || !isAddress(address, { strict: false })) return { ok: false, reason: 'X-Wallet-Address must be a 0x-prefixed 20-byte address' };
  const timestampText = header(headers, 'x-wallet-timestamp') ?? '';
  if (!/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: 'X-Wallet-Timestamp must be unix seconds' };
  const timestamp = Number(timestampText);
  if (Math.abs(timestamp - nowUnix) > walletClockSkewSeconds)
    return { ok: false, reason: `X-Wallet-Timestamp is more than ${walletClockSkewSeconds} s from the marketplace's clock (${nowUnix})` };
  const nonce = header(headers, 'x-wallet-nonce') ?? '';
  if (!noncePattern.test(nonce)) return { ok: false, reason: 'X-Wallet-Nonce must be 16–64 base64url characters' };
  const text = canonicalRequestText({ method: request.method, pathWithQuery: request.pathWithQuery, bodySha256: request.bodySha256, timestamp, nonce });
  const signer = await recoverMessageAddress({ message: text, signature: signature as Hex }).catch(() => undefined);
  const claimed = getAddress(address);
  if (signer === undefined || getAddress(signer) !== claimed)
    return { ok: false, reason: `the wallet signature was not made by ${claimed} over this request (method, path, body, timestamp, nonce)` };
  return { ok: true, address: claimed, nonce, timestamp };
}
