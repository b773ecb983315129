import { type MarketplaceChannel, MarketplaceError } from '@platform/client/marketplace-client';
import type { Outcome } from '@platform/testkit/load-loops';
import type { BenchCaller, PaidWorld } from './paid-world.ts';

/*
 * What each bench caller sends, through the platform's own client (`MarketplaceClient` over the kit's keep-alive
 * JSON client): one `echo` of the bench provider (price 0.001, cap 0.010) per call.
 */

const operation = 'echo';

async function outcomeOf(call: Promise<unknown>): Promise<Outcome> {
  try {
    await call;
    return { ok: true };
  } catch (error) {
    return { ok: false, label: error instanceof MarketplaceError ? `${error.status} ${error.code}` : (error as Error).message };
  }
}

/** The provider called directly, the peer every added latency is measured against. */
export function directCall(world: PaidWorld): () => Promise<Outcome> {
  const url = new URL(`${world.providerUrl}/echo`);
  let n = 0;
  return async () => {
    const answer = await world.client.request('POST', url, {
      body: { invocation_id: String(n++), operation, args: { n }, caller_did: 'bench', max_units: 10, unit: 'call' },
    });
    return answer.status === 200 ? { ok: true } : { ok: false, label: `status ${answer.status}` };
  };
}

/**
 * A call on the hold rail. The client asks for the terms once (its first call), then pays each call in one request:
 * it binds the ref to the call's arguments itself and signs the hold before sending.
 */
export function holdCall(world: PaidWorld, caller: BenchCaller): () => Promise<Outcome> {
  let n = 0;
  return () => outcomeOf(caller.market.invoke(world.serviceId, { operation, args: { n: n++ } }));
}

/** Opens a channel for a caller (402, then the signed hold): what its voucher calls spend. */
export function openChannel(world: PaidWorld, caller: BenchCaller, deposit: string): Promise<MarketplaceChannel> {
  return caller.market.openChannel(world.serviceId, deposit);
}

/** A call paid by the next voucher on the caller's channel (what it has spent plus this call's cap). */
export function voucherCall(channel: MarketplaceChannel): () => Promise<Outcome> {
  let sequence = 0;
  return () => outcomeOf(channel.call(operation, { sequence: ++sequence }));
}
