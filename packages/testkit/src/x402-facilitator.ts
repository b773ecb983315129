import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, defineChain, type Hex, http, nonceManager, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type Child, forkChild, serveChild } from './child-process.ts';

/*
 * A local x402 v2 facilitator on a bench's anvil, in a process of its own: `@x402/core`'s x402Facilitator with
 * `@x402/evm`'s exact scheme (EIP-3009 transferWithAuthorization) behind the three routes its HTTP facilitator
 * client calls (POST /verify, POST /settle, GET /supported), as x402's own facilitator example serves them (there on
 * Express, here on node:http). Its signer is a viem wallet client on the anvil with viem's nonce manager: the
 * example's client fetches the account's nonce for each transaction, so two settlements at once collide on one nonce
 * and one fails. Receipts are polled every 50 ms (anvil mines each transaction at once; viem's default is 4 s).
 */

export interface X402FacilitatorSettings {
  rpcUrl: string;
  chainId: number;
  /** The facilitator's key: it submits (and pays the gas of) every settlement. */
  privateKey: Hex;
}

export type X402FacilitatorProcess = Child<typeof handlers, { url: string; pid: number; address: string }>;

const handlers = {
  cpu: () => process.cpuUsage(),
};

/**
 * Forks the facilitator and resolves once it listens on a loopback port.
 *
 * @example const facilitator = await startX402Facilitator({ rpcUrl: chain.url, chainId: 31337, privateKey }); … facilitator.kill();
 */
export function startX402Facilitator(settings: X402FacilitatorSettings): Promise<X402FacilitatorProcess> {
  return forkChild(fileURLToPath(import.meta.url), settings);
}

function facilitatorFor(settings: X402FacilitatorSettings) {
  const chain = defineChain({
    id: settings.chainId,
    name: 'bench anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [settings.rpcUrl] } },
  });
  const account = privateKeyToAccount(settings.privateKey, { nonceManager });
  const wallet = createWalletClient({ account, chain, transport: http(settings.rpcUrl), pollingInterval: 50 }).extend(publicActions);
  const signer = toFacilitatorEvmSigner(Object.assign(wallet, { address: account.address }) as never);
  const facilitator = new x402Facilitator().register(`eip155:${settings.chainId}`, new ExactEvmScheme(signer));
  return { facilitator, address: account.address };
}

async function main(settings: X402FacilitatorSettings): Promise<void> {
  const { facilitator, address } = facilitatorFor(settings);
  const server = createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
      response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    if (request.method === 'GET' && request.url === '/supported') return answer(200, facilitator.getSupported());
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      try {
        const { paymentPayload, paymentRequirements } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          paymentPayload?: PaymentPayload;
          paymentRequirements?: PaymentRequirements;
        };
        if (!paymentPayload || !paymentRequirements) return answer(400, { error: 'Missing paymentPayload or paymentRequirements' });
        if (request.url === '/verify') return answer(200, await facilitator.verify(paymentPayload, paymentRequirements));
        if (request.url === '/settle') return answer(200, await facilitator.settle(paymentPayload, paymentRequirements));
        answer(404, { error: 'not found' });
      } catch (error) {
        answer(500, { error: error instanceof Error ? error.message : String(error) });
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  serveChild(handlers, { url: `http://127.0.0.1:${port}`, pid: process.pid, address });
}

if (import.meta.main) await main(JSON.parse(process.argv[2] ?? '{}') as X402FacilitatorSettings);
