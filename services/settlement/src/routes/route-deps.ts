import type { Clock } from '@platform/kit/clock';
import type { SettlementChain } from '../chain/settlement-chain.ts';
import type { Command } from '../ledger/commands.ts';
import type { Sequencer } from '../ledger/sequencer.ts';
import type { LedgerReads } from '../reads/ledger-reads.ts';
import type { SignatureVerifier } from './authorise.ts';

/** What the movement routes need: the writer's queue and one read. A front thread passes the sequencer thread's. */
export interface MovementDeps {
  sequencer: { submit(command: Command): Promise<unknown> };
  reads: Pick<LedgerReads, 'receipt'>;
  clock: Clock;
  holdMaxSeconds: number;
  /** Where intents' signatures are checked; inline when absent (a front thread is already off the sequencer's). */
  intentSignatures?: SignatureVerifier;
}

export interface RouteDeps extends MovementDeps {
  sequencer: Sequencer;
  reads: LedgerReads;
  chain: SettlementChain;
}
