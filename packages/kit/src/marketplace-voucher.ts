import { canonicalJson } from './canonical-json.ts';

/**
 * Marketplace vouchers: how a caller pays many small calls from one locked deposit (a channel, or a stream
 * session), and how the marketplace answers. Shared by the marketplace and every caller that signs vouchers.
 *
 * The caller signs, with the ed25519 key of its DID (the one that signed the hold intent opening the tab),
 *
 *     platform-marketplace-voucher-v1\n<canonical JSON of {cumulative, id, kind, sequence, service_id}>
 *
 * where `cumulative` is the total (a settlement-unit decimal with exactly 6 places) it allows the marketplace to
 * take from the tab so far, and `sequence` (a decimal string) grows by at least one with every voucher. The
 * marketplace co-signs with its own DID's key
 *
 *     platform-marketplace-voucher-cosign-v1\n<canonical JSON of {authorized, id, kind, sequence, spent}>
 *
 * stating what it has spent of the tab as of that sequence: it never captures more than the largest cumulative
 * the caller signed, and closing captures exactly the last `spent`.
 */
export const voucherSigningDomain = 'platform-marketplace-voucher-v1\n';
export const cosignSigningDomain = 'platform-marketplace-voucher-cosign-v1\n';

export type TabKind = 'channel' | 'stream';

export interface VoucherTerms {
  kind: TabKind;
  /** The channel or stream session id. */
  id: string;
  service_id: string;
  sequence: string;
  cumulative: string;
}

export interface CosignTerms {
  kind: TabKind;
  id: string;
  sequence: string;
  authorized: string;
  spent: string;
}

export function voucherSigningText(voucher: VoucherTerms): string {
  const { kind, id, service_id, sequence, cumulative } = voucher;
  return `${voucherSigningDomain}${canonicalJson({ cumulative, id, kind, sequence, service_id })}`;
}

export function cosignSigningText(cosign: CosignTerms): string {
  const { kind, id, sequence, authorized, spent } = cosign;
  return `${cosignSigningDomain}${canonicalJson({ authorized, id, kind, sequence, spent })}`;
}
