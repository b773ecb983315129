import type { GatewayCalls } from '../calls/gateway-calls.ts';
import type { ModelPolicy } from '../models/model-policy.ts';
import type { OperatorRepository } from '../operator/operator.repository.ts';
import type { RateCardBook } from '../rate-cards/rate-card-book.ts';

/** What the /v1 routes are given; in a file of its own so the route files need not import the route list. */
export interface RouteDeps {
  calls: GatewayCalls;
  operator: OperatorRepository;
  /** Tells this instance's budget slices at once; other instances hear it through NOTIFY. */
  capChanged: (actor: string) => void;
  book: RateCardBook;
  policy: ModelPolicy;
  defaultCapUnits: bigint;
}
