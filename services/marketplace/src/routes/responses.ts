import { okSchema } from '@platform/kit/envelope';
import { amount, did, evmAddress, hex32, isoTime, nullable, oneOf, openObject, untyped, uuid } from '@platform/kit/wire-schemas';
import { type TSchema, Type } from 'typebox';
import { manifestKinds } from '../listings/manifest-types.ts';

/**
 * The response schemas of the marketplace's routes, written from what they answer (`listings/listing-view.ts`,
 * `payments/*-view`, `payments/quotes.ts`, `receipts.ts`, `tabs.ts`, `discovery/analytics.ts`). They serialise too: a
 * member missing here is not sent. Provider results and manifests are open: they are the provider's and developer's.
 */

/** `{ok: true, data}` around a view, for a route's 200 (or 201). */
export const answers = <T extends TSchema>(data: T) => okSchema(data);

const count = Type.Integer({ minimum: 0 });
const decimalText = (description: string) => Type.String({ pattern: '^[0-9]+$', description });
const priceText = Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,6})?$', description: 'Settlement-unit decimal as the manifest has it' });
const nextCursor = nullable(Type.String({ description: 'Pass back as cursor for the next page; null on the last' }));

const OperationView = Type.Object({
  name: Type.String(),
  description: Type.String(),
  unit: Type.String(),
  price_per_unit: priceText,
  max_units: Type.Integer(),
});

export const CatalogItem = Type.Object({
  id: uuid(),
  slug: Type.String(),
  display_name: Type.String(),
  summary: Type.String(),
  kind: oneOf(manifestKinds),
  quality_score: Type.String({ description: '0.000 to 1.000' }),
  uptime_bps: nullable(Type.Integer({ description: 'Basis points of successful calls; null before any' })),
  operations: Type.Array(OperationView),
});

export const ListingView = Type.Object({
  ...CatalogItem.properties,
  manifest: openObject('The manifest, as GET /v1/manifest-schema describes it'),
  status: oneOf(['draft', 'active', 'paused', 'delisted']),
  owner_address: evmAddress(),
  payout_did: nullable(did()),
  pricing_version: Type.Integer(),
  manifest_hash: hex32('keccak256 of the manifest’s canonical JSON'),
  registry: Type.Object({
    status: oneOf(['none', 'pending', 'registered', 'failed']),
    tx_hash: nullable(hex32()),
    block: nullable(decimalText('Block number')),
    manifest_hash: nullable(hex32('What the on-chain registry records')),
  }),
  created_at: isoTime(),
  updated_at: isoTime(),
  published_at: nullable(isoTime()),
});

export const ListingPage = Type.Object({ results: Type.Array(CatalogItem), next_cursor: nextCursor });
export const DiscoverPage = Type.Object({
  results: Type.Array(Type.Object({ ...CatalogItem.properties, score: Type.String({ description: 'The blended rank, higher first' }) })),
  next_cursor: nextCursor,
});

export const InvocationView = Type.Object({
  invocation_id: uuid(),
  service_id: uuid(),
  operation: Type.String(),
  status: oneOf(['pending', 'succeeded', 'failed']),
  rail: oneOf(['hold', 'voucher', 'stream']),
  cost: amount('What it cost'),
  cap: amount('The most it could have cost'),
  units: decimalText('Units billed'),
  quote_id: nullable(uuid()),
  hold_id: nullable(uuid()),
  channel_id: nullable(uuid()),
  voucher_sequence: nullable(decimalText('The voucher that paid it (voucher rail)')),
  settlement_seq: nullable(decimalText('The settlement receipt that moved the money')),
  request_digest: hex32(),
  response_digest: nullable(hex32()),
  latency_ms: nullable(Type.Integer()),
  started_at: isoTime(),
  finished_at: nullable(isoTime()),
  receipt_url: Type.String(),
});

const TabBalance = Type.Object(
  { id: uuid(), sequence: decimalText('The voucher accepted'), authorized: amount(), spent: amount() },
  { description: 'The channel after this call (voucher rail)' },
);

/** The invoke answer: the invocation, the provider's result as it sent it, and the channel's state on the voucher rail. */
export const CallAnswer = untyped(
  Type.Object({
    ...InvocationView.properties,
    result: Type.Unknown({ description: 'The provider’s result, as its operation’s output_schema says' }),
    tab: Type.Optional(TabBalance),
  }),
);

export const InvocationRecord = Type.Object({
  ...InvocationView.properties,
  result: Type.Optional(Type.Unknown({ description: 'Once succeeded: the provider’s result' })),
  error: Type.Optional(Type.Unknown({ description: 'Once failed: why ({reason, message})' })),
});

const Eip712Domain = Type.Object({ name: Type.String(), version: Type.String(), chainId: Type.Integer() });

export const QuoteView = Type.Object({
  quote_id: uuid(),
  service_id: uuid(),
  operation: Type.String(),
  caller: did(),
  unit_price_settle: amount(),
  estimated_units: decimalText('Units the price covers'),
  max_total_settle: amount('The cap a call under this quote can cost'),
  pricing_version: Type.Integer(),
  expires_at: isoTime(),
  signer: evmAddress('The marketplace’s EIP-712 signer'),
  domain: Eip712Domain,
  digest: hex32(),
  signature: Type.String({ description: '0x EIP-712 signature' }),
});

export const ReceiptView = Type.Object({
  invocation_id: uuid(),
  final: Type.Boolean({ description: 'True once the money moved at settlement; before, signed but provisional' }),
  signer: evmAddress(),
  domain: Eip712Domain,
  primary_type: Type.String({ description: 'Receipt' }),
  types: Type.Record(Type.String(), Type.Array(Type.Object({ name: Type.String(), type: Type.String() })), { description: 'The EIP-712 types' }),
  message: Type.Record(Type.String(), Type.String(), { description: 'The EIP-712 message, integers as decimal strings' }),
  digest: hex32(),
  signature: Type.String(),
  attestation: Type.Object({
    settlement_seq: nullable(decimalText('Settlement’s receipt of the movement')),
    settlement_receipt: nullable(Type.String({ description: 'Where settlement’s receipt is read' })),
    payment_id: nullable(uuid()),
  }),
});

export const TabView = Type.Object({
  id: uuid(),
  kind: oneOf(['channel', 'stream']),
  service_id: uuid(),
  operation: nullable(Type.String()),
  unit_price: nullable(amount()),
  deposit: amount(),
  spent: amount(),
  authorized: amount(),
  sequence: decimalText('The last voucher accepted'),
  status: oneOf(['open', 'closing', 'closed']),
  hold_id: uuid(),
  expires_at: isoTime(),
  created_at: isoTime(),
  closed_at: nullable(isoTime()),
  settlement_seq: nullable(decimalText('The closing capture (or release)')),
});

export const Cosigned = Type.Object({
  kind: oneOf(['channel', 'stream']),
  id: uuid(),
  sequence: decimalText('The voucher co-signed'),
  authorized: amount(),
  spent: amount(),
  signer: did('The marketplace'),
  signature: Type.String(),
});

export const StreamSettlement = Type.Object({
  stream: TabView,
  voucher: Cosigned,
  invocation_id: nullable(uuid('The billed stream invocation; null when nothing was due')),
});

export const ServiceAnalytics = Type.Object({
  service_id: uuid(),
  window: Type.Object({ since: nullable(isoTime()), until: nullable(isoTime()) }),
  invocations: Type.Object({ total: count, succeeded: count, failed: count, pending: count }),
  revenue: amount(),
  success_rate: nullable(Type.String({ description: 'succeeded / finished, 4 places; null without a finished call' })),
  latency_ms: Type.Object({ p50: nullable(Type.Number()), p95: nullable(Type.Number()), p99: nullable(Type.Number()), mean: nullable(Type.Number()) }),
  by_operation: Type.Array(Type.Object({ operation: Type.String(), invocations: count, succeeded: count, failed: count, revenue: amount() })),
  quality_score: Type.String(),
  uptime_bps: nullable(Type.Integer()),
});

export const PayoutView = Type.Object({
  payout_id: uuid(),
  service_id: uuid(),
  to: did(),
  amount: amount(),
  status: oneOf(['pending', 'paid', 'failed']),
  settlement_seq: nullable(decimalText('The settlement payment')),
  error: nullable(Type.String()),
  created_at: isoTime(),
});

export const Me = Type.Object({
  caller: nullable(Type.Object({ did: did(), calls: count, spent: amount() })),
  developer: nullable(Type.Object({ address: evmAddress(), services: count })),
  marketplace: Type.Object({ did: did(), signer: evmAddress(), eip712_chain_id: Type.Integer() }),
});

export const Spend = Type.Object({
  total: amount(),
  by_service: Type.Array(Type.Object({ service_id: uuid(), calls: count, spent: amount() })),
  items: Type.Array(InvocationView),
  next_cursor: nextCursor,
});

const Earned = { earned: amount(), accruing: amount(), paid_out: amount() };
export const Earnings = Type.Object({
  ...Earned,
  services: Type.Array(
    Type.Object({ service_id: uuid(), slug: Type.String(), payout_did: nullable(did()), ...Earned, pending: amount(), available: amount() }),
  ),
  payouts: Type.Array(PayoutView),
});
