import { type PaymentTerms, signHoldForTerms, signVoucher } from '@platform/client/marketplace-payments';
import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { formatAmount } from '@platform/kit/money';
import { encodeIntent, newIntentNonce, signIntent } from '@platform/kit/settlement-intent';
import type { Outcome } from '@platform/testkit/load-loops';
import { invokeRef } from '../src/payments/binding.ts';
import type { BenchCaller, PaidWorld } from './paid-world.ts';

/** What a paid call sends: one `echo` of the bench provider (price 0.001, cap 0.010). */
const operation = 'echo';
const capMicros = 10_000n;

const outcome = (status: number): Outcome => (status === 200 ? { ok: true } : { ok: false, label: `status ${status}` });

/** The provider called directly, the peer every added latency is measured against. */
export function directCall(world: PaidWorld): () => Promise<Outcome> {
  const url = new URL(`${world.providerUrl}/echo`);
  let n = 0;
  return async () => {
    const answer = await world.client.request('POST', url, {
      body: { invocation_id: String(n++), operation, args: { n }, caller_did: 'bench', max_units: 10, unit: 'call' },
    });
    return outcome(answer.status);
  };
}

/**
 * A call on the hold rail, in one request: the caller computes the terms itself (the cap from the listing, the
 * ref by the documented binding) and signs its hold before sending, as a client that knows the price does.
 */
export function holdCall(world: PaidWorld, caller: BenchCaller): () => Promise<Outcome> {
  const url = new URL(`/v1/invoke/${world.serviceId}`, world.marketplace.url);
  const privateKey = privateKeyFromSeed(caller.key.seedHex);
  let n = 0;
  return async () => {
    const args = { n: n++ };
    const ref = invokeRef({ serviceId: world.serviceId, operation, args, quoteId: null, caller: caller.key.did });
    const expiry = new Date(Date.now() + 60_000).toISOString();
    // The key object is made once per caller, not per call (the client's signHoldForTerms makes it each time).
    const wire = encodeIntent(
      signIntent(
        { version: 1, from: caller.key.did, to: world.marketplaceDid, amount: formatAmount(capMicros), ref, nonce: newIntentNonce(), expiry, purpose: 'hold' },
        privateKey,
      ),
    );
    const answer = await world.client.request('POST', url, { headers: { ...caller.headers, 'x-ledger-payment': wire }, body: { operation, args } });
    return outcome(answer.status);
  };
}

/** Opens a channel for a caller (402, then the signed hold): what voucher calls spend. */
export async function openChannel(world: PaidWorld, caller: BenchCaller, deposit: string): Promise<string> {
  const url = new URL('/v1/channels', world.marketplace.url);
  const body = { service_id: world.serviceId, deposit };
  const challenge = await world.client.request('POST', url, { headers: caller.headers, body });
  const terms = (challenge.json as { detail: { terms: PaymentTerms } }).detail.terms;
  const wire = signHoldForTerms(caller.key, terms);
  const opened = await world.client.request('POST', url, { headers: { ...caller.headers, 'x-ledger-payment': wire }, body });
  if (opened.status !== 201) throw new Error(`open failed: ${opened.text}`);
  return (opened.json as { data: { id: string } }).data.id;
}

/** A call paid by the next voucher on the caller's channel (spent so far + this call's cap). */
export function voucherCall(world: PaidWorld, caller: BenchCaller, channelId: string): () => Promise<Outcome> {
  const url = new URL(`/v1/invoke/${world.serviceId}`, world.marketplace.url);
  let sequence = 0;
  return async () => {
    sequence++;
    // One unit (0.001) per call: the caller allows what it has spent plus this call's cap.
    const cumulative = formatAmount(BigInt(sequence - 1) * 1000n + capMicros);
    const payment = {
      rail: 'voucher',
      channel_id: channelId,
      ...signVoucher(caller.key, { kind: 'channel', id: channelId, service_id: world.serviceId }, sequence, cumulative),
    };
    const answer = await world.client.request('POST', url, { headers: caller.headers, body: { operation, args: { sequence }, payment } });
    return outcome(answer.status);
  };
}
