import { randomUUID } from 'node:crypto';
import { MarketplaceError } from '@platform/client/marketplace-client';
import { signVoucher } from '@platform/client/marketplace-payments';
import { formatAmount, parseAmount } from '@platform/kit/money';
import type { BenchCaller, PaidWorld } from '../paid-world.ts';
import { type X402Payer, type X402World, x402CallPrice, x402Invoke } from './x402.ts';

/*
 * What each way of paying charged a caller when the provider failed, and when the caller sent the same call again
 * (its answer lost on the way, say), read from the money itself: the caller's balance at settlement for our rails
 * (a voucher channel is closed first, so what it spent is captured), the payer's token balance on chain for x402.
 * x402 is measured as it behaves: it has no idempotency key, so its client's way to send a call again is to send
 * the request again (a new 402, a new signed payment); re-sending the very payment it signed before is measured too.
 */

export interface ChargeRow {
  path: string;
  scenario: string;
  /** What the caller paid in all, in the token's or the ledger's units of 10^-6. */
  chargedMicros: bigint;
  /** What one call costs, to read the charge as a count of calls. */
  priceMicros: bigint;
  answered: string;
}

const price = 1_000n;

function micros(text: string): bigint {
  const parsed = parseAmount(text, { allowZero: true });
  if (!parsed.ok) throw new TypeError(parsed.reason);
  return parsed.micros;
}

async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return '200';
  } catch (error) {
    return error instanceof MarketplaceError ? `${error.status} ${error.code}` : (error as Error).message;
  }
}

/** Our hold rail and voucher rail, with a fresh caller each so nothing else moves its balance meanwhile. */
export async function ourCharges(world: PaidWorld, hold: BenchCaller, channelCaller: BenchCaller): Promise<ChargeRow[]> {
  const rows: ChargeRow[] = [];
  const balance = async (caller: BenchCaller) => micros((await world.account(caller.key.did)).balance);
  const measureHold = async (scenario: string, work: () => Promise<string>) => {
    const before = await balance(hold);
    const answered = await work();
    rows.push({ path: 'hold rail', scenario, chargedMicros: before - (await balance(hold)), priceMicros: price, answered });
  };
  await measureHold('provider failed (500)', () => outcome(hold.market.invoke(world.serviceId, { operation: 'echo', args: { fail: true } })));
  const key = randomUUID();
  await measureHold('sent twice with the same Idempotency-Key', async () => {
    const call = () => outcome(hold.market.invoke(world.serviceId, { operation: 'echo', args: { n: 1 }, idempotencyKey: key }));
    return `${await call()}, then ${await call()}`;
  });
  const viaChannel = async (scenario: string, work: (send: (sequence: number, args: object) => Promise<string>) => Promise<string>) => {
    const before = await balance(channelCaller);
    const channel = await channelCaller.market.openChannel(world.serviceId, '1');
    const cap = 10_000n;
    const send = (sequence: number, args: object) => {
      const voucher = signVoucher(
        channelCaller.key,
        { kind: 'channel', id: channel.id, service_id: world.serviceId },
        sequence,
        formatAmount(cap * BigInt(sequence)),
      );
      const body = { operation: 'echo', args, payment: { rail: 'voucher', channel_id: channel.id, ...voucher } };
      return outcome(channelCaller.market.call('POST', `/v1/invoke/${world.serviceId}`, body));
    };
    const answered = await work(send);
    await channel.close();
    rows.push({ path: 'voucher rail', scenario, chargedMicros: before - (await balance(channelCaller)), priceMicros: price, answered });
  };
  await viaChannel('provider failed (500)', (send) => send(1, { fail: true }));
  await viaChannel('the same voucher sent twice', async (send) => `${await send(1, { n: 1 })}, then ${await send(1, { n: 1 })}`);
  return rows;
}

/** x402 through its own client, and the same signed payment sent again by hand. */
export async function x402Charges(world: X402World, payer: X402Payer): Promise<ChargeRow[]> {
  const rows: ChargeRow[] = [];
  const measure = async (scenario: string, work: () => Promise<string>) => {
    const before = await world.token.balanceOf(payer.address);
    const answered = await work();
    rows.push({
      path: 'x402 v2 (exact, EIP-3009)',
      scenario,
      chargedMicros: before - (await world.token.balanceOf(payer.address)),
      priceMicros: x402CallPrice,
      answered,
    });
  };
  const status = async (answer: Promise<Response>) => {
    const response = await answer;
    await response.arrayBuffer();
    return String(response.status);
  };
  await measure('provider failed (500)', () => status(x402Invoke(world, payer, { fail: true })));
  await measure(
    'sent twice (@x402/fetch pays each 402)',
    async () => `${await status(x402Invoke(world, payer, { n: 1 }))}, then ${await status(x402Invoke(world, payer, { n: 1 }))}`,
  );
  await measure('the same signed payment sent twice', async () => {
    let paymentHeader: string | null = null;
    // Learn the payment header @x402/fetch signs: the first try of the call pays as usual.
    const first = await x402Invoke(world, payer, { n: 2 }, (headers) => {
      paymentHeader ??= headers.get('payment-signature');
    });
    await first.arrayBuffer();
    const again = await fetch(`${world.seller.info.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': paymentHeader ?? '' },
      body: JSON.stringify({ n: 2 }),
    });
    await again.arrayBuffer();
    return `${first.status}, then ${again.status}`;
  });
  return rows;
}
