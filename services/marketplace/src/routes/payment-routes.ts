import { ok } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import type { FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import { header, optionalString } from '../http/body.ts';
import { callerOf } from '../http/caller-auth.ts';
import { idempotencyKeyOf } from '../http/idempotent.ts';
import type { CallPayment } from '../payments/call-outcome.ts';
import { callerInvocationView } from '../payments/invocation-view.ts';
import { activeListing, operationOf } from '../payments/pricing.ts';
import type { TabKind } from '../payments/tabs.ts';
import { type PaymentTerms, termsHeader } from '../payments/terms.ts';
import { CosignBody, InvocationParams, InvokeBody, QuoteBody, ServiceParams, StreamSettleBody, TabOpenBody, TabParams } from './payment-bodies.ts';
import { answers, CallAnswer, Cosigned, InvocationRecord, QuoteView, ReceiptView, StreamSettlement, TabView } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

type IdParams = { Params: { id: string } };

/**
 * The caller's routes: quotes, paid invocations (both body forms), invocations and receipts, channels, vouchers
 * and stream sessions. Every route here sits behind `requireCaller` (see app.ts); spending is authorised only by
 * the caller's own signatures (`X-Ledger-Payment`, vouchers).
 */
export function registerPaymentRoutes(app: ServiceApp, deps: RouteDeps): void {
  const { payments } = deps;

  const quoteSchema = {
    description: 'A signed (EIP-712) price quote for this caller.',
    params: ServiceParams,
    body: QuoteBody,
    response: { 200: answers(QuoteView) },
  };
  app.post<{ Params: { service_id: string }; Body: Static<typeof QuoteBody> }>('/v1/quote/:service_id', { schema: quoteSchema }, async (request) => {
    const caller = callerOf(request).did;
    const body = request.body;
    const listing = await activeListing(deps.db, request.params.service_id);
    const operation = operationOf(listing, body.operation ?? soleOperation(listing.manifest.operations));
    const units = body.estimated_units ?? '1';
    if (!/^[1-9][0-9]{0,17}$/.test(units))
      throw new ServiceError('invalid_request', 'estimated_units must be a positive integer as a string', { details: { field: 'estimated_units' } });
    return ok(await payments.quotes.create(listing, operation, caller, BigInt(units)));
  });

  const invokeSchema = {
    description: 'A paid call: hold-serve-capture (X-Ledger-Payment) or a voucher on a channel; 402 carries the terms.',
    params: ServiceParams,
    body: InvokeBody,
    response: { 200: answers(CallAnswer) },
  };
  app.post<{ Params: { service_id: string }; Body: Static<typeof InvokeBody> }>('/v1/invoke/:service_id', { schema: invokeSchema }, async (request, reply) => {
    const caller = callerOf(request).did;
    const body = request.body;
    if (body.args !== undefined && body.input !== undefined)
      throw new ServiceError('invalid_request', 'send args or input, not both', { details: { field: 'input' } });
    const listing = await payments.desk.listing(request.params.service_id);
    const outcome = await withTerms(reply, () =>
      payments.desk.call({
        listing,
        caller,
        operation: body.operation ?? soleOperation(listing.manifest.operations),
        args: body.args ?? body.input,
        quoteId: body.quote_id,
        idempotencyKey: idempotencyKeyOf(request.headers['idempotency-key'], body.idempotency_key),
        payment: paymentOf(body.payment, header(request.headers['x-ledger-payment'])),
      }),
    );
    if (!outcome.ok) throw outcome.error;
    return ok(outcome.body);
  });

  const invocationSchema = {
    description: 'One of the caller’s invocations, with its result once it succeeded.',
    params: TabParams,
    response: { 200: answers(InvocationRecord) },
  };
  app.get<IdParams>('/v1/invocations/:id', { schema: invocationSchema }, async (request) => {
    const row = await payments.receipts.invocationOf(callerOf(request).did, request.params.id);
    const stored = (row.response ?? {}) as { result?: unknown };
    return ok({ ...callerInvocationView(row), ...(row.status === 'succeeded' ? { result: stored.result } : {}), ...(row.error ? { error: row.error } : {}) });
  });

  const receiptSchema = { description: 'The EIP-712 receipt of an invocation.', params: InvocationParams, response: { 200: answers(ReceiptView) } };
  app.get<{ Params: { invocation_id: string } }>('/v1/receipts/:invocation_id', { schema: receiptSchema }, async (request) =>
    ok(await payments.receipts.forCaller(callerOf(request).did, request.params.invocation_id)),
  );

  for (const kind of ['channel', 'stream'] as const satisfies TabKind[]) {
    const base = `/v1/${kind}s`;
    const tab = answers(TabView);
    const openSchema = {
      description: `Open a ${kind} (a hold of its deposit); a replay of its key answers 200.`,
      body: TabOpenBody,
      response: { 200: tab, 201: tab },
    };
    app.post<{ Body: Static<typeof TabOpenBody> }>(base, { schema: openSchema }, async (request, reply) => {
      const body = request.body;
      const opened = await withTerms(reply, () =>
        payments.tabs.open({
          kind,
          caller: callerOf(request).did,
          serviceId: body.service_id,
          operation: body.operation,
          deposit: body.deposit,
          expiresInSeconds: body.expires_in_seconds,
          idempotencyKey: idempotencyKeyOf(request.headers['idempotency-key'], body.idempotency_key),
          wire: holdWire(body.payment, header(request.headers['x-ledger-payment'])),
        }),
      );
      reply.code(opened.created ? 201 : 200);
      return ok(opened.view);
    });
    app.get<IdParams>(
      `${base}/:id`,
      { schema: { description: `One of the caller’s ${kind}s.`, params: TabParams, response: { 200: tab } } },
      async (request) => {
        const live = await payments.tabs.live(callerOf(request).did, kind, request.params.id);
        return ok(payments.tabs.view(live));
      },
    );
    const closeSchema = { description: `Close the ${kind}: capture what was spent, return the rest.`, params: TabParams, response: { 200: tab } };
    app.post<IdParams>(`${base}/:id/close`, { schema: closeSchema }, async (request) =>
      ok(await payments.tabDesk.close(callerOf(request).did, kind, request.params.id)),
    );
  }

  const settleSchema = {
    description: 'Bill the units used so far of a stream session.',
    params: TabParams,
    body: StreamSettleBody,
    response: { 200: answers(StreamSettlement) },
  };
  app.post<IdParams & { Body: Static<typeof StreamSettleBody> }>('/v1/streams/:id/settle', { schema: settleSchema }, async (request) => {
    const body = request.body;
    return ok(await payments.tabDesk.settleStream(callerOf(request).did, request.params.id, { ...voucherOf(body), units: body.units }));
  });

  const cosignSchema = { description: 'The marketplace’s co-signed statement of a tab.', body: CosignBody, response: { 200: answers(Cosigned) } };
  app.post<{ Body: Static<typeof CosignBody> }>('/v1/vouchers/cosign', { schema: cosignSchema }, async (request) => {
    const body = request.body;
    const channel = body.channel_id;
    const stream = body.stream_id;
    if ((channel === undefined) === (stream === undefined))
      throw new ServiceError('invalid_request', 'name one channel_id or one stream_id', { details: { field: 'channel_id' } });
    const cosigned = await payments.tabDesk.cosign(callerOf(request).did, channel ? 'channel' : 'stream', (channel ?? stream) as string, voucherOf(body));
    return ok(cosigned);
  });
}

/** Without an operation, a service with exactly one means that one. */
function soleOperation(operations: ReadonlyArray<{ name: string }>): string | undefined {
  return operations.length === 1 ? operations[0]?.name : undefined;
}

function voucherOf(body: Record<string, unknown>) {
  return { sequence: body.sequence, cumulative: body.cumulative, signature: body.signature };
}

/**
 * How a call is paid: `X-Ledger-Payment` (the spec's paid retry), or the body's `payment` object: `{rail: "hold",
 * intent}` or `{rail: "voucher", channel_id, sequence, cumulative, signature}`.
 */
function paymentOf(payment: unknown, ledgerPayment: string | undefined): CallPayment {
  if (payment === undefined || payment === null) return ledgerPayment === undefined ? undefined : { rail: 'hold', wire: ledgerPayment };
  if (typeof payment !== 'object' || Array.isArray(payment))
    throw new ServiceError('invalid_request', 'payment must be an object with a rail', { details: { field: 'payment' } });
  const fields = payment as Record<string, unknown>;
  if (fields.rail === 'hold') {
    const wire = holdWire(payment, ledgerPayment);
    return wire === undefined ? undefined : { rail: 'hold', wire };
  }
  if (fields.rail === 'voucher') {
    if (ledgerPayment !== undefined) throw new ServiceError('invalid_request', 'a voucher call carries no X-Ledger-Payment', { details: { field: 'payment' } });
    const tabId = optionalString(fields, 'channel_id');
    if (tabId === undefined)
      throw new ServiceError('invalid_request', 'payment.channel_id is required for the voucher rail', { details: { field: 'payment.channel_id' } });
    return { rail: 'voucher', tabId, voucher: voucherOf(fields) as { sequence: string; cumulative: string; signature: string } };
  }
  throw new ServiceError('invalid_request', 'payment.rail must be "hold" or "voucher"', { details: { field: 'payment.rail' } });
}

/** A hold intent from `X-Ledger-Payment` or `payment.intent` (both and different is a mistake). */
function holdWire(payment: unknown, ledgerPayment: string | undefined): string | undefined {
  const intent = payment && typeof payment === 'object' ? (payment as Record<string, unknown>).intent : undefined;
  if (intent !== undefined && typeof intent !== 'string')
    throw new ServiceError('invalid_request', 'payment.intent must be the intent’s wire form (a string)', { details: { field: 'payment.intent' } });
  if (intent !== undefined && ledgerPayment !== undefined && intent !== ledgerPayment)
    throw new ServiceError('invalid_request', 'X-Ledger-Payment and payment.intent differ', { details: { field: 'payment.intent' } });
  return ledgerPayment ?? (intent as string | undefined);
}

/** A 402 carries its terms in the `X-Payment-Required` header too (base64url JSON), for clients that read headers. */
async function withTerms<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const terms =
      error instanceof ServiceError && error.code === 'payment_required' ? (error.details as { terms?: PaymentTerms } | undefined)?.terms : undefined;
    if (terms) reply.header('x-payment-required', termsHeader(terms));
    throw error;
  }
}
