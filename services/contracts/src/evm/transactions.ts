import { gasLimitFor } from '@platform/kit/chain/gas';
import { ServiceError } from '@platform/kit/errors';
import type { Logger } from 'pino';
import {
  type Abi,
  type Address,
  BaseError,
  getAddress,
  type Hex,
  HttpRequestError,
  keccak256,
  type Log,
  type PublicClient,
  parseEventLogs,
  TimeoutError,
  type TransactionReceipt,
  toHex,
  WaitForTransactionReceiptTimeoutError,
} from 'viem';
import { type ChainProfile, localProfileId } from '../chains/chain-profiles.ts';
import type { ChainRpc } from '../chains/chain-rpc.ts';
import type { ChainSettings } from '../config.ts';
import type { Custody } from '../wallet/custody.ts';
import type { OpenWallet } from '../wallet/wallets.ts';
import { toJsonValue } from './abi-values.ts';
import { revertOrThrow } from './revert-decoder.ts';

export interface TransactionRequest {
  wallet: OpenWallet;
  profile: ChainProfile;
  /** Absent for a contract creation. */
  to: Address | undefined;
  data: Hex;
  value: bigint;
  purpose: 'deploy' | 'call';
  requestedCapWei: bigint | undefined;
  /** Decodes events in the receipt and custom errors in a failing estimate. */
  abi: Abi | undefined;
  /** Runs after signing and before sending: a deploy records the bytes so a retry can only ever re-send them. */
  onSigned?: (txHash: Hex, rawTx: Hex) => Promise<void>;
  /** Runs when the node refused the signed transaction outright: it was never broadcast. */
  onRefused?: () => Promise<void>;
}

export interface TransactionOutcome {
  tx_hash: Hex;
  /** `submitted` when no receipt came within the wait: look it up again later. */
  status: 'confirmed' | 'reverted' | 'submitted';
  block_number: string | null;
  gas_used: string | null;
  /** What the transaction paid for its gas (gas used times the effective gas price), once mined. */
  fee_wei: string | null;
  contract_address: Address | null;
  max_cost_wei: string;
  events: Array<{ address: Address; name: string | null; args: unknown; topics: Hex[]; data: Hex }>;
}

/** Whether the node knows the transaction (in its pool or mined). */
function nodeHolds(client: PublicClient, hash: Hex): Promise<boolean> {
  return client.getTransaction({ hash }).then(
    () => true,
    () => false,
  );
}

/** A refusal of the node to take a signed transaction (as opposed to not hearing back from it). */
function isNetworkFailure(error: unknown): boolean {
  return error instanceof BaseError && error.walk((cause) => cause instanceof HttpRequestError || cause instanceof TimeoutError) !== null;
}

/**
 * Signs and sends transactions with the embedded wallet. Everything that can refuse happens before signing:
 * chain allowed, estimate (a transaction that would revert is refused with the revert decoded), per-transaction
 * cap on value plus maximum fee, daily cap. One transaction per wallet at a time, so nonces do not collide.
 */
export class TransactionSender {
  readonly #rpc: ChainRpc;
  readonly #custody: Custody;
  readonly #settings: ChainSettings;
  readonly #logger: Logger;
  readonly #walletQueues = new Map<string, Promise<unknown>>();

  constructor(options: { rpc: ChainRpc; custody: Custody; settings: ChainSettings; logger: Logger }) {
    this.#rpc = options.rpc;
    this.#custody = options.custody;
    this.#settings = options.settings;
    this.#logger = options.logger;
  }

  send(request: TransactionRequest): Promise<TransactionOutcome> {
    const key = request.wallet.address;
    const previous = this.#walletQueues.get(key) ?? Promise.resolve();
    const run = previous.then(() => this.#send(request));
    const settled = run.catch(() => undefined);
    this.#walletQueues.set(key, settled);
    void settled.then(() => {
      if (this.#walletQueues.get(key) === settled) this.#walletQueues.delete(key);
    });
    return run;
  }

  /** Waits for a receipt; `submitted` when none arrives in the configured time. */
  async outcome(client: PublicClient, txHash: Hex, maxCostWei: bigint, abi: Abi | undefined): Promise<TransactionOutcome> {
    let receipt: TransactionReceipt;
    try {
      receipt = await client.waitForTransactionReceipt({ hash: txHash, pollingInterval: 250, timeout: this.#settings.receiptTimeoutMs });
    } catch (error) {
      if (error instanceof WaitForTransactionReceiptTimeoutError || isNetworkFailure(error)) return pendingOutcome(txHash, maxCostWei);
      throw error;
    }
    return receiptOutcome(receipt, maxCostWei, abi);
  }

  async #send(request: TransactionRequest): Promise<TransactionOutcome> {
    const { wallet, profile } = request;
    this.#custody.checkChain(profile);
    const client = await this.#rpc.verifiedClient(profile);
    if (profile.id === localProfileId) await this.#fundFromDevAccount(client, wallet.address);
    const call = { account: wallet.address, to: request.to, data: request.data, value: request.value };
    let gas: bigint;
    try {
      gas = gasLimitFor(await client.estimateGas(call));
    } catch (error) {
      const revert = revertOrThrow(error, request.abi);
      throw new ServiceError('conflict', `the transaction would revert: ${revert.message}`, { details: { reason: 'execution_reverted', revert } });
    }
    const fees = await feesOf(client);
    const maxCostWei = request.value + gas * fees.maxFeePerGas;
    const spendId = await this.#custody.reserve({ did: wallet.did, profile, purpose: request.purpose, maxCostWei, requestedCapWei: request.requestedCapWei });
    let txHash: Hex | undefined;
    try {
      const nonce = await client.getTransactionCount({ address: wallet.address, blockTag: 'pending' });
      const rawTx = await wallet.account.signTransaction({
        ...fees.fields,
        chainId: profile.chainId,
        nonce,
        gas,
        to: request.to ?? null,
        data: request.data,
        value: request.value,
      });
      const hash = keccak256(rawTx);
      await request.onSigned?.(hash, rawTx);
      await this.#custody.attach(spendId, hash);
      txHash = hash;
      await client.sendRawTransaction({ serializedTransaction: rawTx });
    } catch (error) {
      // Not heard back: the node may hold it, so it stays counted and is reported as submitted.
      if (isNetworkFailure(error) && txHash !== undefined) return pendingOutcome(txHash, maxCostWei);
      // Refused because the node already has these very bytes: a concurrent retry of the same deployment re-sends what
      // onSigned recorded, and may reach the node first. That is this transaction sent, not refused.
      if (txHash !== undefined && (await nodeHolds(client, txHash))) return this.outcome(client, txHash, maxCostWei, request.abi);
      await this.#custody.release(spendId);
      if (txHash !== undefined) await request.onRefused?.();
      if (error instanceof ServiceError) throw error;
      const message = error instanceof BaseError ? error.shortMessage : error instanceof Error ? error.message : String(error);
      throw new ServiceError('conflict', `the node refused the transaction: ${message}`, { cause: error, details: { reason: 'node_refused' } });
    }
    return this.outcome(client, txHash, maxCostWei, request.abi);
  }

  /** On the local chain a wallet with nothing is given CONTRACTS_LOCAL_FUNDING_WEI by the node's first dev account. */
  async #fundFromDevAccount(client: PublicClient, address: Address): Promise<void> {
    if ((await client.getBalance({ address })) > 0n) return;
    // Dev-node methods are outside viem's public-client schema.
    const accounts = (await client.request({ method: 'eth_accounts' } as never)) as Address[];
    const funder = accounts[0];
    if (!funder) throw new ServiceError('unavailable', 'the local node has no dev account to fund the wallet from', { details: { reason: 'no_dev_account' } });
    const hash = (await client.request({
      method: 'eth_sendTransaction',
      params: [{ from: funder, to: address, value: toHex(this.#settings.localFundingWei) }],
    } as never)) as Hex;
    await client.waitForTransactionReceipt({ hash, pollingInterval: 100, timeout: this.#settings.receiptTimeoutMs });
    this.#logger.info({ address, wei: this.#settings.localFundingWei.toString() }, 'funded a wallet on the local chain');
  }
}

async function feesOf(client: PublicClient) {
  try {
    const fees = await client.estimateFeesPerGas();
    return {
      maxFeePerGas: fees.maxFeePerGas,
      fields: { type: 'eip1559' as const, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas },
    };
  } catch {
    // A chain without EIP-1559: a legacy gas price is then also the maximum fee.
    const gasPrice = await client.getGasPrice();
    return { maxFeePerGas: gasPrice, fields: { type: 'legacy' as const, gasPrice } };
  }
}

function pendingOutcome(txHash: Hex, maxCostWei: bigint): TransactionOutcome {
  return {
    tx_hash: txHash,
    status: 'submitted',
    block_number: null,
    gas_used: null,
    fee_wei: null,
    contract_address: null,
    max_cost_wei: maxCostWei.toString(),
    events: [],
  };
}

function receiptOutcome(receipt: TransactionReceipt, maxCostWei: bigint, abi: Abi | undefined): TransactionOutcome {
  return {
    tx_hash: receipt.transactionHash,
    status: receipt.status === 'success' ? 'confirmed' : 'reverted',
    block_number: receipt.blockNumber.toString(),
    gas_used: receipt.gasUsed.toString(),
    fee_wei: (receipt.gasUsed * receipt.effectiveGasPrice).toString(),
    contract_address: receipt.contractAddress ? getAddress(receipt.contractAddress) : null,
    max_cost_wei: maxCostWei.toString(),
    events: decodeEvents(receipt.logs, abi),
  };
}

function decodeEvents(logs: Log[], abi: Abi | undefined): TransactionOutcome['events'] {
  const decoded = abi ? parseEventLogs({ abi, logs, strict: false }) : [];
  return logs.map((log) => {
    const match = decoded.find((entry) => entry.logIndex === log.logIndex);
    return { address: log.address, name: match?.eventName ?? null, args: match ? toJsonValue(match.args) : null, topics: log.topics, data: log.data };
  });
}
