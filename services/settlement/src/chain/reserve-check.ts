import { formatAmount } from '@platform/kit/money';
import type { LedgerTotals } from './settlement-chain.ts';

/** The vault's side of the reserve equation, read at one block. */
export interface VaultTotals {
  block: bigint;
  /** What the vault counts as owed: its deposits less its payouts, claims and refunds. */
  reserve: bigint;
  paidOut: bigint;
  /** The token's `balanceOf(vault)`: what it can actually pay. A token that can seize or burn may cut it unseen by the vault. */
  tokens: bigint;
}

export interface ReserveCheck {
  ok: boolean;
  block: string;
  supply: string;
  reserve: string;
  /** Burned in the ledger, not yet paid by the vault. */
  in_flight_withdrawals: string;
  /** In the vault, waiting for their DID to be named. */
  unclaimed_deposits: string;
  /** What the reserve falls short of (negative: holds more than the ledger accounts for). */
  shortfall: string;
  /** The vault's token balance, and what it falls short of the reserve it owes (0 when it holds enough). */
  vault_tokens: string;
  token_shortfall: string;
}

/**
 * Fully reserved, checked exactly: at a block through which every vault deposit has been taken in, the vault's
 * reserve must equal the supply plus what is still owed out of it — withdrawals burned but not yet paid, and
 * deposits set aside as unclaimed. Any difference (a credit without a deposit, a deposit credited twice, a payout
 * the ledger never burned, a faucet credit without tokens) shows as a shortfall or a surplus. And the vault must
 * hold the tokens for that reserve: its counters see only what goes through it, not tokens a token contract seizes
 * or burns (more tokens than the reserve is fine: anyone may send some to it without `deposit`).
 */
export function checkReserve(vault: VaultTotals, ledger: LedgerTotals): ReserveCheck {
  const supply = ledger.available + ledger.held;
  const inFlight = ledger.withdrawn - vault.paidOut;
  const owed = supply + inFlight + ledger.unclaimed;
  const shortfall = owed - vault.reserve;
  const tokenShortfall = vault.reserve > vault.tokens ? vault.reserve - vault.tokens : 0n;
  return {
    ok: shortfall === 0n && inFlight >= 0n && tokenShortfall === 0n,
    block: vault.block.toString(),
    supply: formatAmount(supply),
    reserve: formatAmount(vault.reserve),
    in_flight_withdrawals: signed(inFlight),
    unclaimed_deposits: formatAmount(ledger.unclaimed),
    shortfall: signed(shortfall),
    vault_tokens: formatAmount(vault.tokens),
    token_shortfall: formatAmount(tokenShortfall),
  };
}

/** What a failed check says, for the alarm and the log. */
export function reserveProblem(check: ReserveCheck): string {
  const problems: string[] = [];
  if (check.shortfall !== '0.000000' || check.in_flight_withdrawals.startsWith('-'))
    problems.push(`supply and reserve disagree at block ${check.block}: shortfall ${check.shortfall}`);
  if (check.token_shortfall !== '0.000000')
    problems.push(`the vault holds ${check.vault_tokens} tokens at block ${check.block} but owes ${check.reserve}: tokens left it without a payout`);
  return problems.join('; ');
}

const signed = (micros: bigint) => (micros < 0n ? `-${formatAmount(-micros)}` : formatAmount(micros));

/**
 * What a run of reserve checks means. A node can name a block before it serves all of that block's state, so a
 * deposit count read there may be short while the reserve read a moment later is whole: a first disagreement is a
 * doubt (read again on the next pass, nothing taken in meanwhile), and only a second disagreement in a row is the
 * alarm, which stands for good. A real disagreement does not go away; a check that agrees ends a doubt.
 */
export class ReserveWatch {
  #doubting = false;
  /** The alarm's text once raised. */
  alarm: string | undefined;

  observe(check: ReserveCheck): 'ok' | 'doubt' | 'alarm' {
    if (this.alarm !== undefined) return 'alarm';
    if (check.ok) {
      this.#doubting = false;
      return 'ok';
    }
    if (!this.#doubting) {
      this.#doubting = true;
      return 'doubt';
    }
    this.alarm = reserveProblem(check);
    return 'alarm';
  }
}
