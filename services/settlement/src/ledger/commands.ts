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
