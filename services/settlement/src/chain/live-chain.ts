import { type ChainNode, connectNode, fundOnDevelopmentNode } from '@platform/kit/chain/chain-node';
import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { formatAmount } from '@platform/kit/money';
import { secretFromSettingOrFile } from '@platform/kit/secret-file';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type Address, encodeFunctionData, getAddress, type Hex, maxUint256 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { accountHash } from '../balances/balance-tree.ts';
import type { ChainSettings } from '../config.ts';
import type { SettlementSchema } from '../db/schema.ts';
import type { Sequencer } from '../ledger/sequencer.ts';
import { depositView } from '../ledger/views.ts';
import { depositsSeen } from '../windows/window-closer.ts';
import { Anchoring } from './anchoring.ts';
import { DepositWatcher } from './deposit-watcher.ts';
import { ensureDevelopmentContracts } from './dev-contracts.ts';
import { Payouts } from './payouts.ts';
import { checkReserve, type ReserveCheck, ReserveWatch, reserveProblem } from './reserve-check.ts';
import { type ChainGauges, readLedgerTotals, registerDepositClaim, type SettlementChain, type SupplyView } from './settlement-chain.ts';
import { TxRefused, TxSender } from './tx-sender.ts';
import { tokenAbi, vaultAbi } from './vault-contracts.ts';
import { VaultReader } from './vault-reader.ts';

/** What the faucet mints at a time, so most faucet calls need one transaction (the deposit). */
const faucetMintMicros = 1_000_000_000_000n;
/** How long a faucet call waits for the watcher to credit its confirmed deposit before answering `awaiting_credit`. */
const faucetCreditWaitMs = 10_000;

export interface LiveChainOptions {
  settings: ChainSettings;
  dev: boolean;
  /** SETTLEMENT_CHAIN_ID when it was given: the node must serve it. */
  expectedChainId: number | undefined;
  db: Kysely<SettlementSchema>;
  dataDir: string;
  clock: Clock;
  logger: Logger;
}

/**
 * The ledger on a real chain. One loop, run only while this instance is the sequencer (the one writer, holding
 * the one EVM key's nonces): track sent transactions, take in confirmed deposits, check the reserve, anchor the
 * next batches, pay withdrawals of anchored batches; then wait `pollMs` or until nudged (a batch written, a
 * transaction ended, a faucet call). Everything it decides is read back from the database and the vault at
 * each step, so a restart, a takeover or a crash between any two steps resumes where the chain says it is.
 */
export class LiveChain implements SettlementChain {
  readonly live = true;
  readonly chainId: number;
  readonly vaultAddress: Address;
  readonly tokenAddress: Address;
  readonly node: ChainNode;
  readonly #options: LiveChainOptions;
  readonly #vault: VaultReader;
  readonly #sender: TxSender;
  readonly #watcher: DepositWatcher;
  readonly #anchoring: Anchoring;
  readonly #payouts: Payouts;
  readonly #stop = new AbortController();
  #sequencer: Sequencer | undefined;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #nudged = false;
  #leading = false;
  #lastCheck: ReserveCheck | undefined;
  /** The reserve checks' verdicts: a first disagreement is read again before it becomes the alarm. */
  readonly #reserve = new ReserveWatch();
  #frozen = false;
  #faucetLock: Promise<unknown> = Promise.resolve();
  #passing: Promise<unknown> = Promise.resolve();
  #lastLoopError = '';

  private constructor(options: LiveChainOptions, node: ChainNode, contracts: { vault: Address; token: Address; fromBlock: bigint }) {
    this.#options = options;
    this.node = node;
    this.chainId = node.chainId;
    this.vaultAddress = contracts.vault;
    this.tokenAddress = contracts.token;
    const { db, clock, logger, settings } = options;
    this.#vault = new VaultReader(node, contracts.vault, settings.confirmations, contracts.fromBlock);
    this.#sender = new TxSender({
      db,
      node,
      clock,
      logger,
      abi: vaultAbi,
      settings: { confirmations: settings.confirmations, feeBumpMs: settings.feeBumpSeconds * 1000, maxFeePerGasWei: settings.maxFeePerGasWei },
    });
    this.#sender.onSettled = () => this.nudge();
    this.#watcher = new DepositWatcher({
      db,
      node,
      vault: this.#vault,
      credit: (command) => this.#submit(command),
      paused: () => this.#alarm() !== undefined,
      clock,
      logger,
    });
    this.#anchoring = new Anchoring({ db, vault: this.#vault, sender: this.#sender, clock, logger });
    this.#payouts = new Payouts({ db, vault: this.#vault, sender: this.#sender, clock, logger, retryBaseMs: settings.pollMs * 2 });
  }

  /** Connects to the node, and in development funds the sequencer's key and deploys the contracts when needed. */
  static async open(options: LiveChainOptions): Promise<LiveChain> {
    const { settings, logger, clock, db } = options;
    const key = secretFromSettingOrFile(settings.evmKeyHex, options.dataDir, 'evm.key', 'SETTLEMENT_EVM_KEY');
    const node = await connectNode({
      url: settings.rpcUrl,
      account: privateKeyToAccount(`0x${key.hex}`),
      expectedChainId: options.expectedChainId === undefined ? undefined : { id: options.expectedChainId, setting: 'SETTLEMENT_CHAIN_ID' },
      timeoutMs: settings.startTimeoutMs,
      clock,
      logger,
    });
    if (options.dev) await fundOnDevelopmentNode(node, logger);
    let contracts: { vault: Address; token: Address; fromBlock: bigint };
    let reset = false;
    if (settings.vaultAddress) {
      const vault = getAddress(settings.vaultAddress);
      const token = getAddress(await node.client.readContract({ address: vault, abi: vaultAbi, functionName: 'token' }));
      if (settings.tokenAddress && getAddress(settings.tokenAddress) !== token)
        throw new Error(`the vault ${vault} holds token ${token}, not SETTLEMENT_TOKEN_ADDRESS ${settings.tokenAddress}`);
      const sequencer = getAddress(await node.client.readContract({ address: vault, abi: vaultAbi, functionName: 'sequencer' }));
      if (sequencer !== node.account.address)
        throw new Error(`the vault ${vault} takes anchors from ${sequencer}, not from this key (${node.account.address})`);
      contracts = { vault, token, fromBlock: settings.vaultFromBlock };
    } else if (options.dev) {
      const deployed = await ensureDevelopmentContracts(node, {
        dataDir: options.dataDir,
        tokenAddress: settings.tokenAddress,
        forceWithdrawDelaySeconds: settings.forceWithdrawDelaySeconds,
        logger,
      });
      contracts = deployed;
      reset = deployed.reset;
    } else throw new Error('SETTLEMENT_VAULT_ADDRESS is required with SETTLEMENT_RPC_URL outside development');
    const chain = new LiveChain(options, node, contracts);
    if (reset) {
      await chain.#sender.abandonOpen('the development chain was reset');
      await db.deleteFrom('chain_state').where('name', '=', 'deposit_watcher').execute();
    }
    logger.info(
      { chainId: node.chainId, vault: contracts.vault, token: contracts.token, sequencer: node.account.address, key: key.source },
      'settlement chain connected',
    );
    return chain;
  }

  /** Starts the loop; it acts only while `sequencer` leads. */
  attach(sequencer: Sequencer): void {
    this.#sequencer = sequencer;
    this.#running ??= this.#loop();
  }

  /** Runs the loop's next pass now instead of after `pollMs`. */
  nudge(): void {
    this.#nudged = true;
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    await this.#running;
  }

  async #loop(): Promise<void> {
    const { clock, settings } = this.#options;
    while (!this.#stop.signal.aborted) {
      try {
        await this.runPass();
        this.#lastLoopError = '';
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        // A node that is down says so once, not every poll.
        if (message !== this.#lastLoopError) this.#options.logger.error({ err: error }, 'the chain loop failed; trying again');
        this.#lastLoopError = message;
      }
      if (this.#nudged) {
        this.#nudged = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const wait = new AbortController();
        this.#wake = () => wait.abort();
        void clock.sleep(settings.pollMs, AbortSignal.any([wait.signal, this.#stop.signal])).then(resolve);
      });
      this.#wake = undefined;
      this.#nudged = false;
    }
  }

  /** One pass now, after any pass in progress (passes never overlap): the loop's step, and what a faucet call waits on. */
  runPass(): Promise<void> {
    const run = this.#passing.then(() => this.#pass());
    this.#passing = run.catch(() => undefined);
    return run;
  }

  async #pass(): Promise<void> {
    if (this.#sequencer?.role !== 'sequencer') {
      this.#leading = false;
      return;
    }
    if (!this.#leading) {
      // Taking over: what another instance sent is in the database; read it afresh.
      this.#sender.reset();
      this.#watcher.reset();
      this.#leading = true;
    }
    await this.#sender.track();
    // The reserve is checked at the block the ledger has taken every deposit through, before the next are taken in.
    // A disagreement seen for the first time is read again next pass; nothing is taken in until then.
    if ((await this.#check(await this.#watcher.verify())) !== 'doubt') await this.#watcher.step();
    for (let steps = 0; steps < 16 && (await this.#anchoring.step()); steps++) await this.#sender.track();
    for (let steps = 0; steps < 4 && (await this.#payouts.step()); steps++) await this.#sender.track();
  }

  /** Whether the vault was frozen, and the reserve equation at the block the watcher has covered (when known this pass). */
  async #check(block: bigint | undefined): Promise<'unchecked' | 'ok' | 'doubt' | 'alarm'> {
    const frozen = await this.#vault.read('frozen', []);
    if (frozen && !this.#frozen)
      this.#options.logger.fatal({ vault: this.vaultAddress }, 'the vault is frozen: the ledger can no longer settle; holders claim from the vault');
    this.#frozen = frozen;
    if (block === undefined) return 'unchecked';
    const [reserve, paidOut, tokens] = await Promise.all([
      this.#vault.read('reserve', [], block),
      this.#vault.read('totalPaidOut', [], block),
      this.#vaultTokens(block),
    ]);
    const check = checkReserve({ block, reserve, paidOut, tokens }, await readLedgerTotals(this.#options.db));
    this.#lastCheck = check;
    const alreadyRaised = this.#reserve.alarm !== undefined;
    const verdict = this.#reserve.observe(check);
    if (verdict === 'doubt') this.#options.logger.warn({ check }, `${reserveProblem(check)}: reading the chain again before raising the alarm`);
    if (verdict === 'alarm' && !alreadyRaised) this.#options.logger.fatal({ check }, `${this.#reserve.alarm}; deposits are no longer credited`);
    return verdict;
  }

  /** Credits go through the sequencer's ordinary deposit command. */
  #submit(command: Parameters<Sequencer['submit']>[0]): Promise<unknown> {
    if (!this.#sequencer) return Promise.reject(new ServiceError('unavailable', 'no sequencer yet'));
    return this.#sequencer.submit(command);
  }

  #alarm(): string | undefined {
    return this.#reserve.alarm ?? this.#watcher.alarm ?? this.#anchoring.stuck ?? (this.#frozen ? 'the vault is frozen' : undefined);
  }

  /** The reserve token's balance of the vault (at the latest block without one). */
  #vaultTokens(block?: bigint): Promise<bigint> {
    return this.node.client.readContract({
      address: this.tokenAddress,
      abi: tokenAbi,
      functionName: 'balanceOf',
      args: [this.vaultAddress],
      ...(block === undefined ? {} : { blockNumber: block }),
    });
  }

  async supply(): Promise<SupplyView> {
    const totals = await readLedgerTotals(this.#options.db);
    const [reserve, paidOut, tokens] = await Promise.all([this.#vault.read('reserve', []), this.#vault.read('totalPaidOut', []), this.#vaultTokens()]);
    const supply = totals.available + totals.held;
    const inFlight = totals.withdrawn - paidOut;
    // Deposits in the vault not yet credited (waiting for confirmations, or unclaimed) explain any surplus.
    const uncredited = reserve - supply - inFlight;
    // Before the first exact check (a quiet chain not yet past the vault's block with enough confirmations), a ledger
    // that owes nothing is reserved by nothing.
    const owesNothing = supply === 0n && totals.withdrawn === 0n && totals.unclaimed === 0n;
    const checked = this.#lastCheck === undefined ? owesNothing : this.#lastCheck.ok;
    return {
      supply: formatAmount(supply),
      available: formatAmount(totals.available),
      held: formatAmount(totals.held),
      reserve: formatAmount(reserve),
      fully_reserved: checked && this.#reserve.alarm === undefined && uncredited >= 0n && tokens >= reserve,
      chain_id: this.chainId,
      vault_address: this.vaultAddress,
      vault_tokens: formatAmount(tokens),
      in_flight_withdrawals: formatAmount(inFlight < 0n ? 0n : inFlight),
      uncredited_deposits: uncredited < 0n ? `-${formatAmount(-uncredited)}` : formatAmount(uncredited),
      last_check: this.#lastCheck ?? null,
      alarm: this.#alarm() ?? null,
    };
  }

  info(): Record<string, unknown> {
    return {
      mode: 'live',
      token_address: this.tokenAddress,
      sequencer_address: this.node.account.address,
      confirmations: this.#options.settings.confirmations,
      deposit_call: 'deposit(uint256 amount, bytes32 didHash)',
    };
  }

  health(): { alarm?: string; [more: string]: unknown } {
    const alarm = this.#alarm();
    return { mode: 'live', chain_id: this.chainId, vault: this.vaultAddress, frozen: this.#frozen, ...(alarm ? { alarm } : {}) };
  }

  async registerClaim(did: string): Promise<void> {
    await registerDepositClaim(this.#options.db, did);
    this.nudge();
  }

  /**
   * Deposits the vault counts at its latest block beyond those the ledger took in (credited or set aside as unclaimed),
   * and the anchor's wait in blocks as the chain loop saw it on its last pass (known only while this instance leads).
   */
  async gauges(): Promise<ChainGauges> {
    const [onChain, seen] = await Promise.all([this.#vault.read('depositCount', []), depositsSeen(this.#options.db)]);
    return {
      anchorLagBlocks: this.#leading && this.#sequencer?.role === 'sequencer' ? this.#anchoring.lagBlocks() : Number.NaN,
      depositsAwaitingConfirmations: onChain > seen ? Number(onChain - seen) : 0,
    };
  }

  halted(): string | undefined {
    return this.#frozen ? 'the vault is frozen: the ledger no longer moves funds; claim your balance from the vault' : undefined;
  }

  /**
   * The development faucet on chain: mints reserve tokens to the sequencer's key, deposits them into the vault for
   * `did`, and answers once the watcher has credited that deposit, so supply still equals reserve.
   */
  async fund(did: string, micros: bigint): Promise<unknown> {
    await this.registerClaim(did);
    // One faucet deposit at a time: each spends the sequencer's minted tokens, so the next must see what is left.
    const run = this.#faucetLock.then(() => this.#faucetDeposit(did, micros));
    this.#faucetLock = run.catch(() => undefined);
    const outcome = await run;
    if (!outcome) return { deposit: null, status: 'awaiting_confirmations' };
    // Confirmed means deep enough for the watcher too: one pass takes it in, two if a pass was already under way,
    // more when a loaded node names its head before it serves that block's logs (the watcher then reads it again).
    const { clock, settings } = this.#options;
    const giveUpAt = clock.now().getTime() + faucetCreditWaitMs;
    for (;;) {
      await this.runPass();
      const credited = await this.#options.db.selectFrom('deposits').selectAll().where('tx_hash', '=', outcome.hash).executeTakeFirst();
      if (credited) return { deposit: depositView(credited), replayed: false };
      if (clock.now().getTime() >= giveUpAt || this.#stop.signal.aborted) return { deposit: null, tx_hash: outcome.hash, status: 'awaiting_credit' };
      await clock.sleep(settings.pollMs, this.#stop.signal);
    }
  }

  async #faucetDeposit(did: string, micros: bigint): Promise<{ hash: Hex } | undefined> {
    try {
      await this.#prepareFaucet(micros);
      const outcome = await this.#sender.send({
        purpose: 'faucet',
        ref: did,
        to: this.vaultAddress,
        data: encodeFunctionData({ abi: vaultAbi, functionName: 'deposit', args: [micros, accountHash(did) as Hex] }),
      });
      if (outcome && outcome.status !== 'confirmed') throw new ServiceError('unavailable', `the faucet deposit failed: ${outcome.error}`, { retryable: true });
      return outcome;
    } catch (error) {
      if (error instanceof TxRefused) throw new ServiceError('unavailable', `the faucet could not deposit: ${error.message}`, { retryable: true });
      throw error;
    }
  }

  async #prepareFaucet(micros: bigint): Promise<void> {
    const { client, account } = this.node;
    const [balance, allowance] = await Promise.all([
      client.readContract({ address: this.tokenAddress, abi: tokenAbi, functionName: 'balanceOf', args: [account.address] }),
      client.readContract({ address: this.tokenAddress, abi: tokenAbi, functionName: 'allowance', args: [account.address, this.vaultAddress] }),
    ]);
    if (balance < micros) {
      const amount = micros > faucetMintMicros ? micros : faucetMintMicros;
      await this.#confirm('mint', encodeFunctionData({ abi: tokenAbi, functionName: 'mint', args: [account.address, amount] }));
    }
    if (allowance < micros)
      await this.#confirm('approve', encodeFunctionData({ abi: tokenAbi, functionName: 'approve', args: [this.vaultAddress, maxUint256] }));
  }

  async #confirm(what: string, data: Hex): Promise<void> {
    const outcome = await this.#sender.send({ purpose: 'faucet', ref: what, to: this.tokenAddress, data });
    if (outcome?.status !== 'confirmed')
      throw new ServiceError('unavailable', `the faucet could not ${what} tokens: ${outcome?.error ?? 'not confirmed in time'}`, { retryable: true });
  }
}
