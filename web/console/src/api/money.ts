import { SettlementReads } from '@platform/client/settlement-reads';
import { type EvidenceVerdict, verifyReceiptEvidence } from '@platform/kit/receipt-log/receipt-evidence';
import type { Receipt } from '@platform/kit/receipt-log/receipt-shape';
import { authHeaders } from './client.ts';

/** Settlement's public reads through the router's `/ledger` prefix, with the user's token (the router requires sign-in). */
export const ledger = new SettlementReads({
  baseUrl: '/ledger',
  fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...authHeaders() } }),
});

/** An entry of settlement's transfer feed: the receipt without its version and sequencer key. */
export type Transfer = Omit<Receipt, 'v' | 'sequencer'>;

/** Micro-units of a 6-place decimal amount, as a bigint (never a float): for sums and the chart's scale. */
export function micros(amount: string): bigint {
  const [whole = '0', fraction = ''] = amount.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
}

/** A bigint of micros back to a decimal string with 2 to 6 places. */
export function formatMicros(value: bigint): string {
  const whole = value / 1_000_000n;
  const fraction = (value % 1_000_000n)
    .toString()
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${whole}.${fraction.padEnd(2, '0')}`;
}

/**
 * Fetches receipt `seq`'s evidence (the receipt, its batch's checkpoint and inclusion proof, the latest checkpoint
 * and the consistency proof to it) and checks it here with the kit's verifier, against the sequencer key settlement
 * publishes.
 */
export async function verifyReceipt(seq: number): Promise<{ verdict: EvidenceVerdict; receipt: Record<string, unknown> }> {
  const [info, { evidence, record }] = await Promise.all([ledger.info(), ledger.receiptEvidence(seq)]);
  const verdict = await verifyReceiptEvidence(evidence, { sequencerPublicKey: info.sequencer_public_key, origin: info.checkpoint_origin });
  return { verdict, receipt: record.receipt };
}
