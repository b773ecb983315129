import { ServiceError } from '@platform/kit/errors';
import { uuidv7 } from '@platform/kit/ids';
import { formatAmount, maxAmountMicros } from '@platform/kit/money';
import { leafHash } from '@platform/kit/receipt-log/merkle-log';
import { type Receipt, type ReceiptKind, receiptBytes, type SignedReceipt } from '@platform/kit/receipt-log/receipt';
import type { AccountTable, DepositTable, HoldTable, IdempotencyTable, IntentNonceTable, ReceiptTable, WithdrawalTable } from '../db/schema.ts';
import type {
  BindCommand,
  CaptureCommand,
  DepositCommand,
  HoldCommand,
  IdempotencyClaim,
  MovementCommand,
  NonceClaim,
  PayCommand,
  ReleaseCommand,
  WithdrawCommand,
} from './commands.ts';
import type { SequencerKey } from './ledger-key.ts';
import { depositView, holdView, withdrawalView } from './views.ts';

/** What the group reads before applying: committed rows, looked up in bulk by the prefetch. */
export interface GroupBase {
  accounts: ReadonlyMap<string, AccountTable>;
  holds: ReadonlyMap<string, HoldTable>;
  /** Keyed by idempotencyKey(did, key). */
  idempotency: ReadonlyMap<string, IdempotencyTable>;
  /** Keyed by nonceKey(did, nonce). */
  nonces: ReadonlySet<string>;
  /** Keyed by depositKey(txHash, logIndex). */
  deposits: ReadonlyMap<string, DepositTable>;
  /** Open holds past expiry, for the expire command. */
  dueHolds: readonly string[];
}

export const idempotencyKey = (did: string, key: string) => `${did}\u0000${key}`;
export const nonceKey = (did: string, nonce: string) => `${did}\u0000${nonce}`;
export const depositKey = (txHash: string, logIndex: number) => `${txHash}\u0000${logIndex}`;

const conflict = (message: string, reason: string, details: Record<string, unknown> = {}) =>
  new ServiceError('conflict', message, { details: { reason, ...details } });

/**
 * One group commit being built: the single writer applies each command in order to staged copies of the
 * rows it touches, then writes everything in one transaction. A command that is refused changes nothing:
 * every handler checks all it needs before its first mutation.
 */
export class Group {
  readonly accounts = new Map<string, AccountTable>();
  readonly holds = new Map<string, HoldTable>();
  readonly idempotency = new Map<string, IdempotencyTable>();
  readonly nonces: IntentNonceTable[] = [];
  readonly receipts: ReceiptTable[] = [];
  readonly deposits: DepositTable[] = [];
  readonly withdrawals: WithdrawalTable[] = [];
  /** Largest single movement: a large one closes the window at once. */
  largestMicros = 0n;
  readonly #consumedNonces = new Set<string>();
  /** Receipts issued but not yet signed: signWith fills the signature into the receipt and its row. */
  readonly #unsigned: Array<{ bytes: Buffer; receipt: SignedReceipt; row: ReceiptTable }> = [];
  readonly #newDeposits = new Map<string, DepositTable>();
  readonly #base: GroupBase;
  readonly #key: SequencerKey;
  readonly #now: Date;
  /** Every receipt of a group carries the group's time. */
  readonly #at: string;
  #seq: bigint;

  constructor(base: GroupBase, seq: bigint, key: SequencerKey, now: Date) {
    this.#base = base;
    this.#seq = seq;
    this.#key = key;
    this.#now = now;
    this.#at = now.toISOString();
  }

  /** The seq after this group's receipts. */
  get nextSeq(): bigint {
    return this.#seq;
  }

  /** Signs every receipt the group issued, in one call (the sequencer passes its crypto worker). */
  async signWith(sign: (messages: readonly Uint8Array[]) => Promise<string[]>): Promise<void> {
    const signatures = await sign(this.#unsigned.map((entry) => entry.bytes));
    this.#unsigned.forEach((entry, index) => {
      const signature = signatures[index] as string;
      entry.receipt.signature = signature;
      entry.row.signature = signature;
    });
    this.#unsigned.length = 0;
  }

  /** False when every command was refused or changed nothing (an expiry sweep with nothing due). */
  get hasWrites(): boolean {
    return this.accounts.size > 0 || this.receipts.length > 0 || this.holds.size > 0 || this.idempotency.size > 0 || this.nonces.length > 0;
  }

  /** Applies one command; returns its result data or throws the ServiceError that refuses it. */
  apply(command: MovementCommand): unknown {
    switch (command.kind) {
      case 'pay':
        return this.#authorised(command, command.from, () => this.#pay(command));
      case 'hold':
        return this.#authorised(command, command.payer, () => this.#hold(command));
      case 'capture':
        return this.#authorised(command, command.caller, () => this.#capture(command));
      case 'release':
        return this.#authorised(command, command.caller, () => this.#release(command));
      case 'withdraw':
        return this.#authorised(command, command.did, () => this.#withdraw(command));
      case 'deposit':
        return this.#deposit(command);
      case 'bind':
        return this.#bind(command);
      case 'expire':
        return this.#expireDue();
    }
  }

  /** Idempotent replay first (a replayed intent then returns its result, not a nonce error), then the nonce. */
  #authorised(command: { kind: string; idempotency?: IdempotencyClaim | undefined; nonce?: NonceClaim | undefined }, did: string, run: () => unknown) {
    const claim = command.idempotency;
    if (claim) {
      const key = idempotencyKey(did, claim.key);
      const previous = this.idempotency.get(key) ?? this.#base.idempotency.get(key);
      if (previous) {
        if (previous.request_hash !== claim.requestHash) {
          throw conflict('idempotency_key was already used with a different request', 'idempotency_key_reused', { operation: previous.operation });
        }
        return previous.result;
      }
    }
    if (command.nonce) {
      const key = nonceKey(command.nonce.did, command.nonce.nonce);
      if (this.#consumedNonces.has(key) || this.#base.nonces.has(key)) throw new ServiceError('unauthorized', 'intent nonce was already used');
    }
    const result = run();
    if (command.nonce) {
      this.#consumedNonces.add(nonceKey(command.nonce.did, command.nonce.nonce));
      this.nonces.push({ did: command.nonce.did, nonce: command.nonce.nonce, expires_at: command.nonce.expiresAt });
    }
    if (claim) {
      this.idempotency.set(idempotencyKey(did, claim.key), {
        did,
        key: claim.key,
        operation: command.kind,
        request_hash: claim.requestHash,
        // A pay keeps only its seq: the receipt is in the receipts table already, and storing it twice would
        // double what each pay writes. The route puts the receipt back on a replay.
        result: command.kind === 'pay' ? { seq: (result as { seq: number }).seq } : result,
        created_at: this.#now,
      });
    }
    return result;
  }

  #pay(command: PayCommand) {
    if (command.from === command.to) throw new ServiceError('invalid_request', 'to must be another account than the payer');
    this.#requireFunds(command.from, command.micros);
    this.#requireRoom(command.to, command.micros);
    this.#stage(command.from).balance -= command.micros;
    this.#credit(command.to, command.micros);
    const receipt = this.#issue('transfer', command.from, command.to, command.micros, command.ref, null);
    return { seq: receipt.seq, receipt };
  }

  #hold(command: HoldCommand) {
    if (command.payer === command.payee) throw new ServiceError('invalid_request', 'to must be another account than the payer');
    if (command.expiresAt.getTime() <= this.#now.getTime()) throw new ServiceError('invalid_request', 'the hold would already be expired');
    this.#requireFunds(command.payer, command.micros);
    const id = uuidv7(this.#now.getTime());
    const payer = this.#stage(command.payer);
    payer.balance -= command.micros;
    payer.held += command.micros;
    const receipt = this.#issue('hold', command.payer, command.payee, command.micros, command.ref, id);
    const hold: HoldTable = {
      id,
      payer: command.payer,
      payee: command.payee,
      amount: command.micros,
      captured: 0n,
      returned: 0n,
      status: 'open',
      ref: command.ref,
      expires_at: command.expiresAt,
      created_at: this.#now,
      closed_at: null,
      created_seq: BigInt(receipt.seq),
      closed_seq: null,
    };
    this.holds.set(id, hold);
    return { hold: holdView(hold), seq: receipt.seq };
  }

  #capture(command: CaptureCommand) {
    const hold = this.#openHold(command.holdId);
    if (command.caller !== hold.payee) throw new ServiceError('forbidden', 'only the hold’s beneficiary can capture it');
    if (this.#now.getTime() >= hold.expires_at.getTime()) {
      throw conflict(`hold expired at ${hold.expires_at.toISOString()}; its funds return to the payer`, 'hold_expired');
    }
    const captured = command.micros ?? hold.amount;
    if (captured > hold.amount)
      throw conflict(`amount exceeds the hold’s ${formatAmount(hold.amount)}`, 'exceeds_hold', { hold_amount: formatAmount(hold.amount) });
    const rest = hold.amount - captured;
    this.#requireRoom(hold.payee, captured);
    this.#requireRoom(hold.payer, rest);
    const payer = this.#stage(hold.payer);
    payer.held -= hold.amount;
    payer.balance += rest;
    this.#credit(hold.payee, captured);
    const seqs = [this.#issue('capture', hold.payer, hold.payee, captured, hold.ref, hold.id).seq];
    if (rest > 0n) seqs.push(this.#issue('release', hold.payer, hold.payee, rest, hold.ref, hold.id).seq);
    const closed = this.#close(hold, 'captured', captured, rest, seqs.at(-1) as number);
    return { hold: holdView(closed), seqs };
  }

  #release(command: ReleaseCommand) {
    const hold = this.#openHold(command.holdId);
    const expired = this.#now.getTime() >= hold.expires_at.getTime();
    if (command.caller === hold.payer && !expired) {
      throw new ServiceError('forbidden', `the payer can release the hold only after it expires at ${hold.expires_at.toISOString()}`);
    }
    if (command.caller !== hold.payer && command.caller !== hold.payee)
      throw new ServiceError('forbidden', 'only the hold’s payer or beneficiary can release it');
    return this.#returnHold(hold, 'release');
  }

  #expireDue() {
    let expired = 0;
    for (const id of this.#base.dueHolds) {
      const hold = this.holds.get(id) ?? this.#base.holds.get(id);
      if (hold?.status !== 'open' || hold.expires_at.getTime() > this.#now.getTime()) continue;
      this.#returnHold(hold, 'expire');
      expired += 1;
    }
    return { expired };
  }

  #returnHold(hold: HoldTable, kind: 'release' | 'expire') {
    this.#requireRoom(hold.payer, hold.amount);
    const payer = this.#stage(hold.payer);
    payer.held -= hold.amount;
    payer.balance += hold.amount;
    const receipt = this.#issue(kind, hold.payer, hold.payee, hold.amount, hold.ref, hold.id);
    const closed = this.#close(hold, kind === 'release' ? 'released' : 'expired', 0n, hold.amount, receipt.seq);
    return { hold: holdView(closed), seq: receipt.seq };
  }

  #withdraw(command: WithdrawCommand) {
    const account = this.#account(command.did);
    if (!account?.payout_address) throw conflict('bind a payout address first (POST /v1/account/evm)', 'no_payout_address');
    this.#requireFunds(command.did, command.micros);
    this.#stage(command.did).balance -= command.micros;
    const receipt = this.#issue('withdraw', command.did, null, command.micros, command.swapOut ? `swap_out:${command.swapOut}` : '', null);
    const withdrawal: WithdrawalTable = {
      id: uuidv7(this.#now.getTime()),
      did: command.did,
      amount: command.micros,
      payout_address: account.payout_address,
      swap_out: command.swapOut,
      status: 'pending',
      seq: BigInt(receipt.seq),
      tx_hash: null,
      created_at: this.#now,
      batch_number: null,
      block_number: null,
      attempts: 0,
      last_error: null,
      updated_at: null,
    };
    this.withdrawals.push(withdrawal);
    return { withdrawal: withdrawalView(withdrawal), seq: receipt.seq };
  }

  #deposit(command: DepositCommand) {
    const key = depositKey(command.txHash, command.logIndex);
    const previous = this.#newDeposits.get(key) ?? this.#base.deposits.get(key);
    if (previous) {
      if (previous.did !== command.did || previous.amount !== command.micros) {
        throw conflict('this chain event was already credited with another account or amount', 'deposit_mismatch');
      }
      return { deposit: depositView(previous), replayed: true };
    }
    this.#requireRoom(command.did, command.micros);
    this.#credit(command.did, command.micros);
    const ref = command.source === 'faucet' ? 'faucet' : `${command.txHash}:${command.logIndex}`;
    const receipt = this.#issue('deposit', null, command.did, command.micros, ref, null);
    const deposit: DepositTable = {
      id: uuidv7(this.#now.getTime()),
      source: command.source,
      tx_hash: command.txHash,
      log_index: command.logIndex,
      did: command.did,
      amount: command.micros,
      seq: BigInt(receipt.seq),
      created_at: this.#now,
      chain_index: command.chainIndex ?? null,
      block_number: command.blockNumber ?? null,
    };
    this.deposits.push(deposit);
    this.#newDeposits.set(key, deposit);
    return { deposit: depositView(deposit), replayed: false };
  }

  #bind(command: BindCommand) {
    if (!this.#account(command.did)) throw new ServiceError('not_found', 'no account for this DID yet: an account is created by its first credit');
    this.#stage(command.did).payout_address = command.address;
    return { did: command.did, payout_address: command.address };
  }

  #openHold(id: string): HoldTable {
    const hold = this.holds.get(id) ?? this.#base.holds.get(id);
    if (!hold) throw new ServiceError('not_found', 'hold not found');
    if (hold.status !== 'open') throw conflict(`hold is already ${hold.status}`, 'hold_closed', { status: hold.status });
    return hold;
  }

  #close(hold: HoldTable, status: HoldTable['status'], captured: bigint, returned: bigint, closedSeq: number): HoldTable {
    const closed: HoldTable = { ...hold, status, captured, returned, closed_at: this.#now, closed_seq: BigInt(closedSeq) };
    this.holds.set(hold.id, closed);
    return closed;
  }

  #account(did: string): AccountTable | undefined {
    return this.accounts.get(did) ?? this.#base.accounts.get(did);
  }

  /** A staged copy to mutate; created on first credit when the account does not exist. */
  #stage(did: string): AccountTable {
    let staged = this.accounts.get(did);
    if (!staged) {
      const committed = this.#base.accounts.get(did);
      staged = committed ? { ...committed } : { did, balance: 0n, held: 0n, payout_address: null, created_at: this.#now };
      this.accounts.set(did, staged);
    }
    return staged;
  }

  #credit(did: string, micros: bigint) {
    this.#stage(did).balance += micros;
  }

  #requireFunds(did: string, micros: bigint) {
    const available = this.#account(did)?.balance ?? 0n;
    if (available < micros) {
      throw conflict(`insufficient funds: ${formatAmount(available)} available`, 'insufficient_funds', { available: formatAmount(available) });
    }
  }

  /** Keeps every account inside what the balance tree (and kit money) can represent. */
  #requireRoom(did: string, micros: bigint) {
    const account = this.#account(did);
    const total = (account?.balance ?? 0n) + (account?.held ?? 0n) + micros;
    if (total > maxAmountMicros) throw conflict(`the account would hold more than ${formatAmount(maxAmountMicros)}`, 'balance_limit');
  }

  #issue(kind: ReceiptKind, from: string | null, to: string | null, micros: bigint, ref: string, holdId: string | null): SignedReceipt {
    const seq = this.#seq;
    this.#seq += 1n;
    const unsigned: Receipt = {
      v: 1,
      seq: Number(seq),
      kind,
      from,
      to,
      amount: formatAmount(micros),
      ref,
      hold_id: holdId,
      at: this.#at,
      sequencer: this.#key.publicKeyHex,
    };
    // Signed (later, by signWith) and hashed into the log as the same bytes, built once. signReceipt would
    // re-validate every field; here each comes from checked input, and the tests verify every receipt.
    const bytes = receiptBytes(unsigned);
    const receipt: SignedReceipt = { ...unsigned, signature: '' };
    const row: ReceiptTable = {
      seq,
      kind,
      from_did: from,
      to_did: to,
      amount: micros,
      ref,
      hold_id: holdId,
      at: this.#now,
      signature: '',
      leaf_hash: leafHash(bytes),
    };
    this.receipts.push(row);
    this.#unsigned.push({ bytes, receipt, row });
    if (micros > this.largestMicros) this.largestMicros = micros;
    return receipt;
  }
}
