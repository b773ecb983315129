import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateAgentKey } from '@platform/client/agent-key';
import { percentile } from '@platform/testkit/stats';
import type { TempDatabase } from '@platform/testkit/temp-database';
import { startTestChain } from '@platform/testkit/test-chain';
import pg from 'pg';
import { type Address, createWalletClient, defineChain, type Hex, http, maxUint256, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { accountHash } from '../src/balances/balance-tree.ts';
import { tokenAbi, vaultAbi } from '../src/chain/vault-contracts.ts';
import type { RunResult } from './load-process.ts';
import { withFreshService } from './variants.ts';

export interface ChainLiveResult {
  /** The same load against the same kind of fresh database with no chain, just before: the baseline. */
  off: RunResult;
  pays: RunResult;
  anchored: number;
  gas: { mean: number; min: number; max: number };
  /** Deposit to credit, ms: from sending the vault deposit, and from its receipt, to the balance showing it. */
  depositToCredit: { fromSend: { p50: number; max: number }; fromMined: { p50: number; max: number }; samples: number; pollMs: number };
}

const pollMs = 100;
const depositSamples = 20;

interface RunOptions {
  adminUrl: string;
  seconds: number;
  concurrency: number;
  warmUpMs: number;
  payers: number;
}

/**
 * The pay load twice, each on a fresh database: first with no chain (the baseline, measured next to it so the
 * database's state after the earlier runs and pgbench weighs the same on both), then with the vault live on a
 * local anvil node, every window that closes anchored by a transaction while the pays go on. Then the gas each
 * anchor cost, and how long a vault deposit takes to show as a balance (the watcher polls every `pollMs`, with
 * one confirmation).
 */
export async function chainLiveRun(options: RunOptions): Promise<ChainLiveResult> {
  const off = (await payRun(options, undefined)).pays;
  console.log(`  chain off (fresh database), ${options.concurrency} in flight: ${Math.round(off.paysPerSecond)} pays/s`);
  const chain = await startTestChain();
  try {
    const live = await payRun(options, chain.url);
    console.log(`  chain live, ${options.concurrency} in flight: ${Math.round(live.pays.paysPerSecond)} pays/s`);
    return { off, ...(live as Omit<ChainLiveResult, 'off'>) };
  } finally {
    await chain.stop();
  }
}

async function payRun(options: RunOptions, rpcUrl: string | undefined): Promise<Partial<ChainLiveResult> & { pays: RunResult }> {
  const evmKey = randomBytes(32).toString('hex');
  const env = rpcUrl === undefined ? {} : { SETTLEMENT_RPC_URL: rpcUrl, SETTLEMENT_EVM_KEY: evmKey, SETTLEMENT_CHAIN_POLL_MS: String(pollMs) };
  return withFreshService({ adminUrl: options.adminUrl, engine: 'postgres', env }, async ({ service, load, db }) => {
    const dbUrl = (db as TempDatabase).url;
    // The depositor's tokens are minted by the token's owner (the sequencer's key) before the load starts, so the
    // two never compete for a nonce with the anchors the pays cause.
    const depositor = rpcUrl === undefined ? undefined : await fundDepositor(rpcUrl, evmKey, await chainInfo(service.info.url));
    const prepared = await load.ask('prepare', {
      url: service.info.url,
      payerCount: options.payers,
      payeeCount: options.payers,
      maxSockets: Math.max(options.concurrency, 256),
    });
    if (rpcUrl !== undefined) console.log(`  chain live: ${options.payers} payers funded through vault deposits in ${prepared.seconds.toFixed(1)} s`);
    await load.ask('closedLoop', { concurrency: options.concurrency, durationMs: options.warmUpMs });
    const pays = await load.ask('closedLoop', { concurrency: options.concurrency, durationMs: options.seconds * 1000 });
    if (rpcUrl === undefined) return { pays };
    await settleAndWaitForAnchors(service.info.url, dbUrl);
    const gasRows = await query<{ gas: string }>(dbUrl, 'select anchor_gas_used::text as gas from settlement.batches where anchor_gas_used is not null');
    const gas = gasRows.map((row) => Number(row.gas));
    const depositToCredit = await depositLatency(service.info.url, depositor as Depositor);
    return {
      pays,
      anchored: gas.length,
      gas: { mean: gas.reduce((a, b) => a + b, 0) / Math.max(1, gas.length), min: Math.min(...gas), max: Math.max(...gas) },
      depositToCredit,
    };
  });
}

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

async function agentToken(url: string): Promise<{ did: string; token: string }> {
  const key = generateAgentKey();
  const post = async (route: string, body: object) =>
    (
      (await (await fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as {
        data: never;
      }
    ).data as Record<string, string>;
  const challenge = await post('/v1/agent/auth/challenge', { did: key.did });
  const verified = await post('/v1/agent/auth/verify', {
    did: key.did,
    public_key: key.publicKeyHex,
    nonce: challenge.nonce as string,
    signature: key.sign(challenge.message as string),
  });
  return { did: key.did, token: verified.token as string };
}

/** Closes the last window and waits for every batch to be anchored. */
async function settleAndWaitForAnchors(url: string, dbUrl: string): Promise<void> {
  const { token } = await agentToken(url);
  await fetch(`${url}/v1/settle`, { method: 'POST', headers: { 'x-ledger-agent': token } });
  for (let tries = 0; tries < 600; tries++) {
    const [row] = await query<{ open: number }>(dbUrl, "select count(*)::int as open from settlement.batches where anchor_status <> 'confirmed'");
    if (row?.open === 0) return;
    await sleep(50);
  }
  throw new Error('batches were not anchored within 30 s');
}

interface Depositor {
  wallet: ReturnType<typeof walletOn>;
  token: Address;
  vault: Address;
}

async function chainInfo(url: string): Promise<{ chain_id: number; vault_address: Address; token_address: Address }> {
  return ((await (await fetch(`${url}/v1/info`)).json()) as { data: { chain_id: number; vault_address: Address; token_address: Address } }).data;
}

function walletOn(rpcUrl: string, chainId: number, key: Hex) {
  const chain = defineChain({
    id: chainId,
    name: 'bench',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return createWalletClient({ chain, transport: http(rpcUrl), account: privateKeyToAccount(key) }).extend(publicActions);
}

/** A wallet of its own with gas, tokens minted by the token's owner, and the vault approved. */
async function fundDepositor(rpcUrl: string, evmKey: string, info: { chain_id: number; vault_address: Address; token_address: Address }): Promise<Depositor> {
  const owner = walletOn(rpcUrl, info.chain_id, `0x${evmKey}`);
  const wallet = walletOn(rpcUrl, info.chain_id, `0x${randomBytes(32).toString('hex')}`);
  const wait = async (hash: Hex) => owner.waitForTransactionReceipt({ hash, pollingInterval: 5 });
  await wait(await owner.sendTransaction({ to: wallet.account.address, value: 10n ** 18n }));
  await wait(await owner.writeContract({ address: info.token_address, abi: tokenAbi, functionName: 'mint', args: [wallet.account.address, 10n ** 12n] }));
  await wait(await wallet.writeContract({ address: info.token_address, abi: tokenAbi, functionName: 'approve', args: [info.vault_address, maxUint256] }));
  return { wallet, token: info.token_address, vault: info.vault_address };
}

async function depositLatency(url: string, depositor: Depositor): Promise<ChainLiveResult['depositToCredit']> {
  const { did, token } = await agentToken(url);
  const headers = { 'x-ledger-agent': token };
  await fetch(`${url}/v1/deposit`, { headers });
  const { wallet } = depositor;
  const balance = async () => ((await (await fetch(`${url}/v1/balance`, { headers })).json()) as { data: { balance: string } }).data.balance;
  const fromSend: number[] = [];
  const fromMined: number[] = [];
  for (let i = 0; i < depositSamples; i++) {
    const before = await balance();
    const sent = performance.now();
    const hash = await wallet.writeContract({ address: depositor.vault, abi: vaultAbi, functionName: 'deposit', args: [1_000_000n, accountHash(did) as Hex] });
    await wallet.waitForTransactionReceipt({ hash, pollingInterval: 5 });
    const mined = performance.now();
    while ((await balance()) === before) {
      if (performance.now() - sent > 30_000) throw new Error(`deposit ${hash} was not credited within 30 s`);
      await sleep(2);
    }
    const credited = performance.now();
    fromSend.push(credited - sent);
    fromMined.push(credited - mined);
  }
  const summary = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), max: sorted.at(-1) ?? Number.NaN };
  };
  return { fromSend: summary(fromSend), fromMined: summary(fromMined), samples: depositSamples, pollMs };
}
