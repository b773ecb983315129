import { type FailureBody, failure, okSchema } from '@platform/kit/envelope';
import { invalidRequest } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { logFailure, toServiceError } from '@platform/kit/http/error-handler';
import { chargeForItems } from '@platform/kit/http/rate-limit';
import { maxIntentWireLength } from '@platform/kit/settlement-intent';
import type { FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Command } from '../ledger/commands.ts';
import { type Authorisation, agreeWithIntent, authorise, tokenDid } from './authorise.ts';
import { AmountText, amountInput, DidText, didInput, IdempotencyKey, idempotencyClaim, limits, Ref, uuidInput } from './inputs.ts';
import { BatchResults, MovementResults } from './responses.ts';
import type { MovementDeps } from './route-deps.ts';

const Intent = Type.String({
  minLength: 1,
  maxLength: maxIntentWireLength,
  description: 'base64url of {intent, public_key, signature}: authorises without a token',
});
const defaultHoldSeconds = 3600;
/** Pay and hold: the terms in the body, or a signed intent that carries them. */
const transferFields = {
  to: Type.Optional(DidText),
  amount: Type.Optional(AmountText),
  ref: Type.Optional(Ref),
  idempotency_key: Type.Optional(IdempotencyKey),
  intent: Type.Optional(Intent),
};
const swapOutPattern = /^[A-Z][A-Z0-9]{0,11}$/;

/** Payee, amount and ref from the body, or from the signed intent (where given body fields must agree). */
function transferTerms(body: { to?: string | undefined; amount?: string | undefined; ref?: string | undefined }, auth: Authorisation) {
  if (auth.via === 'intent') {
    return {
      to: agreeWithIntent('to', body.to === undefined ? undefined : didInput(body.to, 'to'), auth.to),
      micros: agreeWithIntent('amount', body.amount === undefined ? undefined : amountInput(body.amount), auth.micros),
      ref: agreeWithIntent('ref', body.ref, auth.ref),
    };
  }
  if (body.to === undefined || body.amount === undefined) throw invalidRequest('to and amount are required');
  return { to: didInput(body.to, 'to'), micros: amountInput(body.amount), ref: body.ref ?? '' };
}

/** One item of `POST /v1/hold/batch/settle`: the capture or release route's body, with the hold it is for. */
const SettleItem = Type.Object(
  {
    hold_id: Type.String({ maxLength: 64 }),
    action: Type.Union([Type.Literal('capture'), Type.Literal('release')]),
    amount: Type.Optional(Type.Unsafe<string>({ ...AmountText, description: 'capture only: how much to take (default all)' })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  { additionalProperties: false },
);

/** A capture or release as the principal, from its route's params and body or a settle batch's item. */
function settleCommand(request: FastifyRequest, item: Static<typeof SettleItem>, idField: string): Command {
  const holdId = uuidInput(item.hold_id, idField);
  const caller = tokenDid(request);
  if (item.action === 'release') {
    if (item.amount !== undefined) throw invalidRequest('a release takes no amount: it returns the whole hold', { field: 'amount' });
    return { kind: 'release', caller, holdId, idempotency: idempotencyClaim(item.idempotency_key, 'release', { hold_id: holdId }) };
  }
  const micros = item.amount === undefined ? undefined : amountInput(item.amount);
  const idempotency = idempotencyClaim(item.idempotency_key, 'capture', { hold_id: holdId, amount: micros?.toString() ?? null });
  return { kind: 'capture', caller, holdId, micros, idempotency };
}

type ItemAnswer = { ok: true; data: unknown } | (FailureBody & { status: number });

/** A batch item's failure as its single route would have answered (and logged) it. */
function itemFailure(request: FastifyRequest, reason: unknown): ItemAnswer {
  const error = toServiceError(reason);
  logFailure(request.log, reason, error);
  return { ...failure(error), status: error.status };
}

/** The routes that move money: each becomes one sequencer command, acknowledged once durable. */
export function registerMovementRoutes(app: ServiceApp, deps: MovementDeps): void {
  const { sequencer, clock } = deps;

  app.post('/v1/pay', {
    schema: {
      description: 'Pay another agent by DID; answers the seq of the signed receipt.',
      body: Type.Object(transferFields, { additionalProperties: false }),
      response: { 200: okSchema(MovementResults.pay) },
    },
    handler: async (request) => {
      const body = request.body;
      const auth = await authorise(request, clock, body.intent, 'pay', deps.intentSignatures);
      const { to, micros, ref } = transferTerms(body, auth);
      const idempotency = idempotencyClaim(body.idempotency_key, 'pay', { to, amount: micros.toString(), ref });
      const data = (await sequencer.submit({
        kind: 'pay',
        from: auth.did,
        to,
        micros,
        ref,
        idempotency,
        nonce: auth.via === 'intent' ? auth.nonce : undefined,
      })) as {
        seq: number;
        receipt?: unknown;
      };
      // A replay answers from the idempotency record, which keeps the seq only; the receipt is read back.
      const receipt = data.receipt ?? (await deps.reads.receipt(data.seq))?.receipt;
      return { ok: true as const, data: { seq: data.seq, receipt } };
    },
  });

  const HoldBody = Type.Object(
    {
      ...transferFields,
      expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: deps.holdMaxSeconds, description: `Default ${defaultHoldSeconds}` })),
    },
    { additionalProperties: false },
  );
  const holdCommand = async (request: FastifyRequest, body: Static<typeof HoldBody>): Promise<Command> => {
    const auth = await authorise(request, clock, body.intent, 'hold', deps.intentSignatures);
    const { to: payee, micros, ref } = transferTerms(body, auth);
    const seconds = body.expires_in_seconds ?? defaultHoldSeconds;
    const expiresAt = new Date(clock.now().getTime() + seconds * 1000);
    const idempotency = idempotencyClaim(body.idempotency_key, 'hold', { to: payee, amount: micros.toString(), ref, expires_in_seconds: seconds });
    return { kind: 'hold', payer: auth.did, payee, micros, ref, expiresAt, idempotency, nonce: auth.via === 'intent' ? auth.nonce : undefined };
  };

  app.post('/v1/hold', {
    schema: {
      description: 'Lock an amount for a beneficiary until it captures, either side releases, or it expires.',
      body: HoldBody,
      response: { 200: okSchema(MovementResults.hold) },
    },
    handler: async (request) => ({ ok: true as const, data: await sequencer.submit(await holdCommand(request, request.body)) }),
  });

  app.post('/v1/hold/:id/capture', {
    schema: {
      description: 'The beneficiary takes up to the held amount; the rest returns to the payer.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      body: Type.Object({ amount: Type.Optional(AmountText), idempotency_key: Type.Optional(IdempotencyKey) }, { additionalProperties: false }),
      response: { 200: okSchema(MovementResults.capture) },
    },
    handler: async (request) => {
      const command = settleCommand(request, { hold_id: request.params.id, action: 'capture', ...request.body }, 'id');
      return { ok: true as const, data: await sequencer.submit(command) };
    },
  });

  app.post('/v1/hold/:id/release', {
    schema: {
      description: 'Return the held amount to the payer: the beneficiary at any time, the payer after expiry.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      body: Type.Object({ idempotency_key: Type.Optional(IdempotencyKey) }, { additionalProperties: false }),
      response: { 200: okSchema(MovementResults.release) },
    },
    handler: async (request) => {
      const command = settleCommand(request, { hold_id: request.params.id, action: 'release', ...request.body }, 'id');
      return { ok: true as const, data: await sequencer.submit(command) };
    },
  });

  app.post('/v1/hold/batch', {
    bodyLimit: limits.batchBodyBytes,
    schema: {
      description: `Place up to ${limits.batchItems} holds in one request, each as POST /v1/hold would (its own intent or the principal token); each item answers on its own.`,
      body: Type.Object({ items: Type.Array(HoldBody, { minItems: 1, maxItems: limits.batchItems }) }, { additionalProperties: false }),
      response: { 200: okSchema(BatchResults.holds) },
    },
    handler: async (request) => ({ ok: true as const, data: { results: await batch(request, request.body.items, (item) => holdCommand(request, item)) } }),
  });

  app.post('/v1/hold/batch/settle', {
    bodyLimit: limits.batchBodyBytes,
    schema: {
      description: `Capture or release up to ${limits.batchItems} holds in one request, as the principal (the beneficiary, or the payer after expiry); each item answers on its own.`,
      body: Type.Object({ items: Type.Array(SettleItem, { minItems: 1, maxItems: limits.batchItems }) }, { additionalProperties: false }),
      response: { 200: okSchema(BatchResults.settle) },
    },
    handler: async (request) => {
      // Every item is the principal's: without one the whole request is refused, as each single route would be.
      tokenDid(request);
      return { ok: true as const, data: { results: await batch(request, request.body.items, (item) => settleCommand(request, item, 'hold_id')) } };
    },
  });

  /**
   * A batch's items, each submitted as its single route would submit it, all in this turn and in order (so they
   * join the sequencer's next group together), each answered on its own: a refused item does not fail the others.
   */
  async function batch<T>(request: FastifyRequest, items: readonly T[], command: (item: T) => Command | Promise<Command>): Promise<ItemAnswer[]> {
    // A batch is as many writes as it has items: from a public address, it spends as many of the write limit's tokens.
    await chargeForItems(request, items.length);
    // Every command first (their intents' signatures checked together), then all submitted in this turn, in order.
    const commands = await Promise.allSettled(items.map(async (item) => command(item)));
    const submitted = commands.map((built) => (built.status === 'fulfilled' ? sequencer.submit(built.value) : Promise.reject(built.reason)));
    const settled = await Promise.allSettled(submitted);
    return settled.map((outcome) => (outcome.status === 'fulfilled' ? { ok: true as const, data: outcome.value } : itemFailure(request, outcome.reason)));
  }

  app.post('/v1/withdraw', {
    schema: {
      description: 'Burn balance now and record the payout to the bound address (sent once the chain issue lands).',
      body: Type.Object(
        {
          amount: Type.Optional(AmountText),
          swap_out: Type.Optional(Type.String({ maxLength: 64, description: 'Uppercase ticker, 1 to 12 characters' })),
          idempotency_key: Type.Optional(IdempotencyKey),
          intent: Type.Optional(Intent),
        },
        { additionalProperties: false },
      ),
      response: { 200: okSchema(MovementResults.withdraw) },
    },
    handler: async (request) => {
      const body = request.body;
      const auth = await authorise(request, clock, body.intent, 'withdraw', deps.intentSignatures);
      let micros: bigint;
      if (auth.via === 'intent') micros = agreeWithIntent('amount', body.amount === undefined ? undefined : amountInput(body.amount), auth.micros);
      else if (body.amount === undefined) throw invalidRequest('amount is required');
      else micros = amountInput(body.amount);
      const swapOut = body.swap_out ?? null;
      if (swapOut !== null && !swapOutPattern.test(swapOut)) {
        throw invalidRequest('swap_out must be an uppercase ticker of 1 to 12 characters (A-Z, then A-Z or 0-9)', { field: 'swap_out' });
      }
      const idempotency = idempotencyClaim(body.idempotency_key, 'withdraw', { amount: micros.toString(), swap_out: swapOut });
      const data = await sequencer.submit({
        kind: 'withdraw',
        did: auth.did,
        micros,
        swapOut,
        idempotency,
        nonce: auth.via === 'intent' ? auth.nonce : undefined,
      });
      return { ok: true as const, data };
    },
  });
}
