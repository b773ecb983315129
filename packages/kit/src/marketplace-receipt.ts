import { type Hex, recoverTypedDataAddress } from 'viem';

/**
 * The marketplace's EIP-712 receipt: its domain, its types, and the check anyone can run on one (the console in a
 * browser, a test, an agent). The marketplace signs with these (`services/marketplace/src/payments/eip712.ts`); a
 * verifier recovers the signer from the typed data with the types written here, never with the ones the receipt
 * carries, and compares it with the signer the marketplace publishes (`GET /v1/registry`'s `operator`), obtained apart
 * from the receipt.
 */

export function marketplaceDomain(chainId: number) {
  return { name: 'Platform Marketplace', version: '1', chainId } as const;
}

export const receiptTypes = {
  Receipt: [
    { name: 'invocationId', type: 'bytes32' },
    { name: 'serviceId', type: 'bytes32' },
    { name: 'operation', type: 'string' },
    { name: 'caller', type: 'string' },
    { name: 'rail', type: 'string' },
    { name: 'status', type: 'string' },
    { name: 'requestDigest', type: 'bytes32' },
    { name: 'responseDigest', type: 'bytes32' },
    { name: 'units', type: 'uint256' },
    { name: 'amount', type: 'uint256' },
    { name: 'settlementSeq', type: 'uint64' },
    { name: 'paymentId', type: 'bytes32' },
    { name: 'startedAt', type: 'uint64' },
    { name: 'finishedAt', type: 'uint64' },
  ],
} as const;

/** A UUID as bytes32: its 16 bytes right-aligned (zeros first), as settlement's vault does for withdrawal ids. */
export function uuidBytes32(id: string): Hex {
  const hex = id.replaceAll('-', '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${id}`);
  return `0x${hex.padStart(64, '0')}`;
}

/** A receipt as the marketplace answers it (`GET /v1/receipts/{id}`): integers of the message as decimal strings. */
export interface SignedMarketplaceReceipt {
  invocation_id: string;
  signer: string;
  domain: { name?: unknown; version?: unknown; chainId?: unknown };
  message: Record<string, string>;
  signature: string;
}

export type ReceiptCheck = { ok: true; signer: string } | { ok: false; reason: string };

/**
 * Checks a marketplace receipt: the domain is the marketplace's, the signature recovers to `expected.signer`, and,
 * given the invocation it is shown beside, the receipt names that invocation and its cost (micro-units).
 */
export async function verifyMarketplaceReceipt(
  receipt: SignedMarketplaceReceipt,
  expected: { signer: string; invocation?: { invocation_id: string; cost_micros: bigint } },
): Promise<ReceiptCheck> {
  const { domain, message } = receipt;
  if (domain.name !== 'Platform Marketplace' || domain.version !== '1' || !Number.isSafeInteger(domain.chainId))
    return { ok: false, reason: 'not a marketplace receipt (its EIP-712 domain is another)' };
  const typed: Record<string, string | bigint> = {};
  for (const field of receiptTypes.Receipt) {
    const value = message[field.name];
    if (typeof value !== 'string') return { ok: false, reason: `the receipt has no ${field.name}` };
    if (field.type.startsWith('uint') && !/^[0-9]{1,78}$/.test(value)) return { ok: false, reason: `${field.name} is not an integer` };
    if (field.type === 'bytes32' && !/^0x[0-9a-fA-F]{64}$/.test(value)) return { ok: false, reason: `${field.name} is not 32 bytes` };
    typed[field.name] = field.type.startsWith('uint') ? BigInt(value) : value;
  }
  let signer: string;
  try {
    signer = await recoverTypedDataAddress({
      domain: marketplaceDomain(domain.chainId as number),
      types: receiptTypes,
      primaryType: 'Receipt',
      // biome-ignore lint/suspicious/noExplicitAny: every member was checked against receiptTypes just above.
      message: typed as any,
      signature: receipt.signature as Hex,
    });
  } catch {
    return { ok: false, reason: 'the signature is malformed' };
  }
  if (signer.toLowerCase() !== expected.signer.toLowerCase())
    return { ok: false, reason: `signed by ${signer}, not by the marketplace’s signer ${expected.signer}` };
  const invocation = expected.invocation;
  if (invocation !== undefined) {
    if (message.invocationId?.toLowerCase() !== uuidBytes32(invocation.invocation_id)) return { ok: false, reason: 'the receipt names another invocation' };
    if (typed.amount !== invocation.cost_micros) return { ok: false, reason: 'the receipt’s amount is not what the invocation cost' };
  }
  return { ok: true, signer };
}
