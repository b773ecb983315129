import { marketplaceDomain, receiptTypes } from '@platform/kit/marketplace-receipt';
import { type Hex, hashTypedData, type PrivateKeyAccount, verifyTypedData } from 'viem';

// The domain, the receipt's types and the UUID encoding are the kit's: verifiers (the console, agents) share them.
export { marketplaceDomain, receiptTypes, uuidBytes32 } from '@platform/kit/marketplace-receipt';

/**
 * The marketplace's EIP-712 signatures: quotes (what a call will cost at most) and receipts (what a call was,
 * and what it cost). The domain names the marketplace and the chain; `signer` is the marketplace's EVM address
 * (`GET /v1/me`… and every quote and receipt carry it), so anyone checks a receipt with viem alone:
 * `verifyTypedData({ address: signer, domain, types, primaryType: 'Receipt', message, signature })`.
 */
export const quoteTypes = {
  Quote: [
    { name: 'quoteId', type: 'bytes32' },
    { name: 'serviceId', type: 'bytes32' },
    { name: 'operation', type: 'string' },
    { name: 'caller', type: 'string' },
    { name: 'unitPrice', type: 'uint256' },
    { name: 'estimatedUnits', type: 'uint256' },
    { name: 'maxTotal', type: 'uint256' },
    { name: 'pricingVersion', type: 'uint64' },
    { name: 'expiresAt', type: 'uint64' },
  ],
} as const;

export interface QuoteMessage {
  quoteId: Hex;
  serviceId: Hex;
  operation: string;
  caller: string;
  unitPrice: bigint;
  estimatedUnits: bigint;
  maxTotal: bigint;
  pricingVersion: bigint;
  /** Unix seconds. */
  expiresAt: bigint;
}

export interface ReceiptMessage {
  invocationId: Hex;
  serviceId: Hex;
  operation: string;
  caller: string;
  rail: string;
  status: string;
  requestDigest: Hex;
  responseDigest: Hex;
  units: bigint;
  /** Micros of the settlement unit. */
  amount: bigint;
  /** The settlement receipt of the capture (0 when nothing was captured, and for voucher calls until their tab closes). */
  settlementSeq: bigint;
  /** The hold or tab that paid. */
  paymentId: Hex;
  /** Unix milliseconds. */
  startedAt: bigint;
  finishedAt: bigint;
}

export const zeroBytes32: Hex = `0x${'0'.repeat(64)}`;

export async function signQuote(signer: PrivateKeyAccount, chainId: number, message: QuoteMessage) {
  const domain = marketplaceDomain(chainId);
  const typed = { domain, types: quoteTypes, primaryType: 'Quote' as const, message };
  return { domain, digest: hashTypedData(typed), signature: await signer.signTypedData(typed) };
}

export async function signReceipt(signer: PrivateKeyAccount, chainId: number, message: ReceiptMessage) {
  const domain = marketplaceDomain(chainId);
  const typed = { domain, types: receiptTypes, primaryType: 'Receipt' as const, message };
  return { domain, digest: hashTypedData(typed), signature: await signer.signTypedData(typed) };
}

export function verifyQuote(signer: Hex, chainId: number, message: QuoteMessage, signature: Hex): Promise<boolean> {
  return verifyTypedData({ address: signer, domain: marketplaceDomain(chainId), types: quoteTypes, primaryType: 'Quote', message, signature });
}
