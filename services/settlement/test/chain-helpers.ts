import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { payoutBindingMessage } from '@platform/kit/payout-binding';
import { eventually } from '@platform/testkit/eventually';
import { startTestChain, type TestChain } from '@platform/testkit/test-chain';
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
  parseEventLogs,
  type Transport,
  type WalletClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tokenAbi, vaultAbi } from '../src/chain/vault-contracts.ts';
import { evmKeyHex, type Settlement } from './harness.ts';

const ether = 10n ** 18n;

/** viem on the test chain, as a user's wallet or an outside observer sees it. */
export function chainClients(chain: TestChain, chainId = 31337) {
  const definition: Chain = defineChain({
    id: chainId,
    name: 'test',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chain.url] } },
  });
  const transport = http(chain.url);
  const client: PublicClient<Transport, Chain> = createPublicClient({ chain: definition, transport, pollingInterval: 20 });
  const walletOf = (key: Hex): WalletClient<Transport, Chain, Account> =>
    createWalletClient({ chain: definition, transport, account: privateKeyToAccount(key) });
  return { client, walletOf, definition };
}

export type Clients = ReturnType<typeof chainClients>;

/** A person's EVM wallet with gas money; tokens come from the development token's owner (the sequencer's key). */
export async function newWallet(chain: TestChain, clients: Clients) {
  const key = generatePrivateKey();
  const wallet = clients.walletOf(key);
  await chain.setBalance(wallet.account.address, 10n * ether);
  return wallet;
}

async function confirmed(clients: Clients, hash: Hex) {
  const receipt = await clients.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

/** Mints development tokens to `to` with the token owner's key. */
export async function mint(clients: Clients, token: Address, to: Address, micros: bigint): Promise<void> {
  const owner = clients.walletOf(`0x${evmKeyHex}`);
  await confirmed(clients, await owner.writeContract({ address: token, abi: tokenAbi, functionName: 'mint', args: [to, micros] }));
}

/** What a person does with `GET /v1/deposit`'s answer: approve the vault, then deposit for the DID hash. Returns the vault's deposit index. */
export async function depositOnChain(
  clients: Clients,
  wallet: WalletClient<Transport, Chain, Account>,
  instructions: { vault_address: Address; token_address: Address; claim: { did_hash: Hex } },
  micros: bigint,
  options: { wait?: boolean; approve?: boolean } = {},
): Promise<{ hash: Hex; index?: bigint }> {
  if (options.approve !== false) await approveVault(clients, wallet, instructions, micros);
  const hash = await wallet.writeContract({
    address: instructions.vault_address,
    abi: vaultAbi,
    functionName: 'deposit',
    args: [micros, instructions.claim.did_hash],
  });
  if (options.wait === false) return { hash };
  const receipt = await confirmed(clients, hash);
  const [event] = parseEventLogs({ abi: vaultAbi, logs: receipt.logs, eventName: 'Deposited' });
  return { hash, index: event?.args.index };
}

/** The token allowance a deposit needs, given to the vault. */
export async function approveVault(
  clients: Clients,
  wallet: WalletClient<Transport, Chain, Account>,
  instructions: { vault_address: Address; token_address: Address },
  micros: bigint,
): Promise<void> {
  await confirmed(
    clients,
    await wallet.writeContract({ address: instructions.token_address, abi: tokenAbi, functionName: 'approve', args: [instructions.vault_address, micros] }),
  );
}

export function tokenBalance(clients: Clients, token: Address, owner: Address): Promise<bigint> {
  return clients.client.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [owner] });
}

export function readVault<
  const F extends 'reserve' | 'lastBatch' | 'lastBalanceRoot' | 'lastLogRoot' | 'lastLogSize' | 'totalPaidOut' | 'frozen' | 'lastAnchorAt' | 'depositsAnchored',
>(clients: Clients, vault: Address, functionName: F) {
  return clients.client.readContract({ address: vault, abi: vaultAbi, functionName });
}

/** The payout binding a wallet signs for a DID on this chain. */
export async function bindingBody(wallet: WalletClient<Transport, Chain, Account>, did: string, chainId: number) {
  const signature = await wallet.account.signMessage?.({ message: payoutBindingMessage(did, wallet.account.address, chainId) });
  return { address: wallet.account.address, signature };
}

/**
 * Runs the chain loop's passes until nothing is on its way: no transaction in flight, every batch anchored, every
 * withdrawal of an anchored batch paid or failed. (A node mines "instantly" a moment after it accepts, so one pass
 * may end before its own transaction's receipt exists.)
 */
export async function untilQuiet(s: Settlement): Promise<void> {
  const live = s.live as NonNullable<Settlement['live']>;
  const db = s.database.db;
  await eventually(
    async () => {
      await live.runPass();
      const [open, unanchored, unpaid] = await Promise.all([
        db.selectFrom('chain_transactions').select('id').where('status', 'in', ['sent', 'mined']).executeTakeFirst(),
        db.selectFrom('batches').select('id').where('anchor_status', '<>', 'confirmed').executeTakeFirst(),
        db.selectFrom('withdrawals').select('id').where('status', 'in', ['pending', 'broadcast']).executeTakeFirst(),
      ]);
      return !open && !unanchored && !unpaid;
    },
    'the chain side has nothing on its way',
    2_000,
  );
}

/**
 * One anvil node per test file (started before its tests, stopped after) handed to `onStart`, and fresh data
 * folders for the service instances it starts (each deploys its own vault there), removed at the end.
 */
export function useTestChain(prefix: string, onStart: (chain: TestChain, clients: Clients) => void): { dataDir(): string } {
  let chain: TestChain | undefined;
  const folders: string[] = [];
  before(async () => {
    chain = await startTestChain();
    onStart(chain, chainClients(chain));
  });
  after(async () => {
    await chain?.stop();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });
  return {
    dataDir() {
      const folder = mkdtempSync(join(tmpdir(), prefix));
      folders.push(folder);
      return folder;
    },
  };
}
