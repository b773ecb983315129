import type { ServiceError } from '@platform/kit/errors';

/**
 * What the single writer applies. Each command is validated for shape by its route; the sequencer checks
 * everything that depends on ledger state (funds, hold status, replays) while holding the only write lease.
 */

/** An intent's nonce, consumed in the same transaction as the movement it authorised. */
export interface NonceClaim {
  did: string;
  nonce: string;
  expiresAt: Date;
}

/** The caller's idempotency key; `requestHash` covers the operation and every parameter. */
export interface IdempotencyClaim {
  key: string;
  requestHash: string;
}

interface Authorised {
  idempotency?: IdempotencyClaim | undefined;
  nonce?: NonceClaim | undefined;
}

export interface PayCommand extends Authorised {
  kind: 'pay';
  from: string;
  to: string;
  micros: bigint;
  ref: string;
}

export interface HoldCommand extends Authorised {
  kind: 'hold';
  payer: string;
  payee: string;
  micros: bigint;
  ref: string;
  expiresAt: Date;
}

export interface CaptureCommand extends Authorised {
  kind: 'capture';
  caller: string;
  holdId: string;
  /** Undefined captures the whole hold. */
  micros: bigint | undefined;
}

export interface ReleaseCommand extends Authorised {
  kind: 'release';
  caller: string;
  holdId: string;
}

export interface WithdrawCommand extends Authorised {
  kind: 'withdraw';
  did: string;
  micros: bigint;
  swapOut: string | null;
}

export interface DepositCommand {
  kind: 'deposit';
  did: string;
  micros: bigint;
  source: 'chain' | 'faucet';
  txHash: string;
  logIndex: number;
  /** The vault's deposit index and block, for deposits the watcher credits. */
  chainIndex?: bigint;
  blockNumber?: bigint;
}

export interface BindCommand {
  kind: 'bind';
  did: string;
  address: string;
}

/** Returns every open hold whose expiry has passed to its payer. */
export interface ExpireCommand {
  kind: 'expire';
}

export type MovementCommand = PayCommand | HoldCommand | CaptureCommand | ReleaseCommand | WithdrawCommand | DepositCommand | BindCommand | ExpireCommand;

/** Closes the open window into a batch (when it has receipts). */
export interface CloseCommand {
  kind: 'close';
  reason: 'time' | 'count' | 'amount' | 'settle';
}

export type Command = MovementCommand | CloseCommand;

export type CommandOutcome = { ok: true; data: unknown } | { ok: false; error: ServiceError };

/**
 * Whether PostgreSQL can store the text as it is: its `text` cannot hold NUL, and a lone surrogate has no UTF-8
 * (a parameter turns it into U+FFFD, jsonb refuses it). A DID's label (`[^:]+`) and an idempotency key are free text.
 */
export function storable(value: string): boolean {
  return value.isWellFormed() && !value.includes('\u0000');
}

/**
 * The first text member of a command the database could not store, or undefined. The routes refuse such text
 * naming the request's field; the writer checks again before it queues anything, since one command's text in a
 * group's one statement would otherwise cost the whole group its write.
 */
export function unstorableMember(command: Command): string | undefined {
  for (const name in command) {
    const value = (command as unknown as Record<string, unknown>)[name];
    if (typeof value === 'string' && !storable(value)) return name;
  }
  if ('idempotency' in command && command.idempotency && !storable(command.idempotency.key)) return 'idempotency_key';
  if ('nonce' in command && command.nonce && !(storable(command.nonce.did) && storable(command.nonce.nonce))) return 'nonce';
  return undefined;
}
