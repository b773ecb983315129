import type { Clock } from '@platform/kit/clock';
import type { SettlementChain } from '../chain/settlement-chain.ts';
import type { Sequencer } from '../ledger/sequencer.ts';
import type { LedgerReads } from '../reads/ledger-reads.ts';

export interface RouteDeps {
  sequencer: Sequencer;
  reads: LedgerReads;
  clock: Clock;
  chain: SettlementChain;
  holdMaxSeconds: number;
}
