import { Type } from 'typebox';

/**
 * The bodies of the caller's routes. Types are checked here; the rules past them (a positive integer in a string, an
 * amount, a tab's limits) are checked by the payments code, whose refusals name the field.
 */
const text = (description: string, maxLength = 256) => Type.Optional(Type.String({ maxLength, description }));
const idempotencyKey = text('Dedupes the write; the Idempotency-Key header says the same (both and different is a mistake)', 128);
const sequence = Type.String({ maxLength: 18, description: 'The voucher’s sequence: a positive integer as a string, past every earlier one' });
const cumulative = Type.String({ maxLength: 40, description: 'What the tab may have spent in all, as of this voucher (an amount)' });
const signature = Type.String({ maxLength: 256, description: 'The caller’s ed25519 signature of the voucher' });

const HoldPayment = Type.Object(
  { rail: Type.Literal('hold'), intent: text('The signed hold intent’s wire form (as X-Ledger-Payment carries it)', 8192) },
  { additionalProperties: false },
);
const VoucherPayment = Type.Object(
  { rail: Type.Literal('voucher'), channel_id: Type.String({ maxLength: 64 }), sequence, cumulative, signature },
  { additionalProperties: false },
);

export const QuoteBody = Type.Object(
  {
    operation: text('The operation to price; a service with one needs none', 128),
    estimated_units: text('How many units the call is expected to use: a positive integer as a string (default 1)', 18),
  },
  { additionalProperties: false },
);

export const InvokeBody = Type.Object(
  {
    operation: text('The operation; a service with one needs none', 128),
    args: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The operation’s arguments, checked against its input schema' })),
    input: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The spec’s other spelling of args (send one of them)' })),
    quote_id: text('A quote of this caller’s to pay by', 64),
    idempotency_key: idempotencyKey,
    payment: Type.Optional(Type.Union([HoldPayment, VoucherPayment], { description: 'How the call is paid, in place of X-Ledger-Payment' })),
  },
  { additionalProperties: false },
);

export const TabOpenBody = Type.Object(
  {
    service_id: Type.String({ minLength: 1, maxLength: 64, description: 'The listing the tab pays' }),
    operation: text('A stream’s operation (a channel pays any operation; name it on each call)', 128),
    deposit: Type.String({ maxLength: 40, description: 'The amount the hold locks' }),
    expires_in_seconds: Type.Optional(Type.Integer({ description: 'How long the tab stays open' })),
    idempotency_key: idempotencyKey,
    payment: Type.Optional(HoldPayment),
  },
  { additionalProperties: false },
);

export const StreamSettleBody = Type.Object(
  { sequence, cumulative, signature, units: Type.String({ maxLength: 18, description: 'Units used so far: a positive integer as a string' }) },
  { additionalProperties: false },
);

export const CosignBody = Type.Object(
  { channel_id: text('The channel (or name a stream_id)', 64), stream_id: text('The stream (or name a channel_id)', 64), sequence, cumulative, signature },
  { additionalProperties: false },
);

export const ServiceParams = Type.Object({ service_id: Type.String({ maxLength: 128, description: 'The listing’s id (or slug)' }) });
export const TabParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The tab’s id' }) });
export const InvocationParams = Type.Object({ invocation_id: Type.String({ maxLength: 64, description: 'The invocation’s id' }) });
export const ListingParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The listing’s id (a UUID)' }) });
export const PayoutBody = Type.Object({ idempotency_key: idempotencyKey }, { additionalProperties: false });
