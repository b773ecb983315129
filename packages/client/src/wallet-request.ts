import { createHash } from 'node:crypto';

/**
 * `Authorization: Wallet <signature>`: a developer's request to the marketplace signed by their wallet (EIP-191
 * `personal_sign`) over six lines, `platform-marketplace-request-v1`, the method, the path and query as sent, the
 * SHA-256 of the body bytes, a timestamp and a nonce. The marketplace checks it (its developers/wallet-request.ts);
 * clients sign with this.
 */
export const walletRequestPrefix = 'platform-marketplace-request-v1';

export interface WalletRequest {
  method: string;
  /** The path and query exactly as sent, e.g. `/v1/services/abc?x=1`. */
  pathWithQuery: string;
  /** The exact body bytes; absent or empty for no body. */
  body?: Uint8Array | string | undefined;
  timestamp: number;
  nonce: string;
}

export interface WalletSigner {
  address: `0x${string}`;
  signMessage(args: { message: string }): Promise<`0x${string}`>;
}

/** Lowercase hex SHA-256 of the body bytes (of nothing for a request without a body). */
export function bodyDigest(body: Uint8Array | string | undefined): string {
  return createHash('sha256')
    .update(body ?? '')
    .digest('hex');
}

/** The text signed: six lines joined by `\n`, no trailing newline. */
export function canonicalRequestText(request: Omit<WalletRequest, 'body'> & { bodySha256: string }): string {
  return [walletRequestPrefix, request.method.toUpperCase(), request.pathWithQuery, request.bodySha256, String(request.timestamp), request.nonce].join('\n');
}

/** The headers of a signed request. @example headers = await signWalletRequest(account, { method: 'POST', pathWithQuery: '/v1/services', body, timestamp, nonce }) */
export async function signWalletRequest(signer: WalletSigner, request: WalletRequest): Promise<Record<string, string>> {
  const signature = await signer.signMessage({ message: canonicalRequestText({ ...request, bodySha256: bodyDigest(request.body) }) });
  return {
    authorization: `Wallet ${signature}`,
    'x-wallet-address': signer.address,
    'x-wallet-timestamp': String(request.timestamp),
    'x-wallet-nonce': request.nonce,
  };
}
