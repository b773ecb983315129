import { benchTokenDomain, deployBenchToken } from '@platform/testkit/bench-token';
import type { Outcome } from '@platform/testkit/load-loops';
import { startTestChain } from '@platform/testkit/test-chain';
import { startX402Facilitator } from '@platform/testkit/x402-facilitator';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startX402Seller } from './x402-seller.ts';

/*
 * x402 v2 beside the marketplace's rails: a local anvil, the EIP-3009 token deployed on it, a facilitator
 * (testkit x402-facilitator.ts) and a seller (x402-seller.ts) each in a process of their own, in front of the same
 * provider stand-in, and callers in the bench's process each with its own key and tokens, paying through
 * `@x402/fetch` as its README shows: every call is sent, answered 402 with the requirements, signed
 * (TransferWithAuthorization) and sent again; the seller has the facilitator verify it, calls the provider, and has
 * the facilitator settle it on chain (one transaction, its receipt awaited) before answering.
 */

const chainId = 31337;
const network = `eip155:${chainId}` as const;
/** One call: 0.001, as the marketplace bench's listing charges per call (the token has 6 decimals). */
export const x402CallPrice = 1_000n;
const fundedUnits = 1_000_000_000n;

export interface X402Payer {
  address: Hex;
  /** `fetch`, paying what a 402 asks. */
  pay: typeof fetch;
  /** Sees the headers of each request `pay` sends (the bench reads the signed payment off it). */
  onRequest: ((headers: Headers) => void) | undefined;
}

export async function startX402World(providerUrl: string, payerCount: number) {
  const chain = await startTestChain({ chainId });
  const ownerKey = generatePrivateKey();
  const facilitatorKey = generatePrivateKey();
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  for (const key of [ownerKey, facilitatorKey]) await chain.setBalance(privateKeyToAccount(key).address, 10n ** 22n);
  const token = await deployBenchToken(chain.url, chainId, ownerKey);
  const facilitator = await startX402Facilitator({ rpcUrl: chain.url, chainId, privateKey: facilitatorKey });
  const seller = await startX402Seller({
    facilitatorUrl: facilitator.info.url,
    providerUrl,
    network,
    payTo,
    asset: token.address,
    amount: String(x402CallPrice),
    domain: benchTokenDomain,
  });
  const payers: X402Payer[] = [];
  for (let i = 0; i < payerCount; i++) {
    const account = privateKeyToAccount(generatePrivateKey());
    await token.mint(account.address, fundedUnits);
    // The bench token is no default asset of x402's, so its spend controls (default assets only, $1 a payment) are off.
    const client = x402Client.fromConfig({ schemes: [{ network, client: new ExactEvmScheme(toClientEvmSigner(account)) }], spendControls: false });
    const payer: X402Payer = { address: account.address, pay: fetch, onRequest: undefined };
    payer.pay = wrapFetchWithPayment((input, init) => {
      const request = new Request(input, init);
      payer.onRequest?.(request.headers);
      return fetch(request);
    }, client);
    payers.push(payer);
  }
  const stop = async () => {
    seller.kill();
    facilitator.kill();
    await Promise.all([seller.exited, facilitator.exited]);
    await chain.stop();
  };
  return { chain, token, facilitator, seller, payTo, payers, stop };
}

export type X402World = Awaited<ReturnType<typeof startX402World>>;

/** One paid call through x402 (`args` as the marketplace's calls send them; `fail` makes the provider answer 500). */
export async function x402Invoke(world: X402World, payer: X402Payer, args: Record<string, unknown>, onRequest?: (headers: Headers) => void): Promise<Response> {
  payer.onRequest = onRequest;
  try {
    return await payer.pay(`${world.seller.info.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
  } finally {
    payer.onRequest = undefined;
  }
}

export function x402Call(world: X402World, payer: X402Payer): () => Promise<Outcome> {
  let n = 0;
  return async () => {
    try {
      const answer = await x402Invoke(world, payer, { n: n++ });
      await answer.arrayBuffer();
      return answer.status === 200 ? { ok: true } : { ok: false, label: `status ${answer.status}` };
    } catch (error) {
      return { ok: false, label: (error as Error).message.slice(0, 80) };
    }
  };
}
