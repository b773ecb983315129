import { okSchema } from '@platform/kit/envelope';
import { invalidRequest } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { maxIntentWireLength } from '@platform/kit/settlement-intent';
import { Type } from 'typebox';
import { type Authorisation, agreeWithIntent, authorise, tokenDid } from './authorise.ts';
import { AmountText, amountInput, DidText, didInput, IdempotencyKey, idempotencyClaim, Ref, uuidInput } from './inputs.ts';
import { MovementResults } from './responses.ts';
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
      const auth = authorise(request, clock, body.intent, 'pay');
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

  app.post('/v1/hold', {
    schema: {
      description: 'Lock an amount for a beneficiary until it captures, either side releases, or it expires.',
      body: Type.Object(
        {
          ...transferFields,
          expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: deps.holdMaxSeconds, description: `Default ${defaultHoldSeconds}` })),
        },
        { additionalProperties: false },
      ),
      response: { 200: okSchema(MovementResults.hold) },
    },
    handler: async (request) => {
      const body = request.body;
      const auth = authorise(request, clock, body.intent, 'hold');
      const { to: payee, micros, ref } = transferTerms(body, auth);
      const seconds = body.expires_in_seconds ?? defaultHoldSeconds;
      const expiresAt = new Date(clock.now().getTime() + seconds * 1000);
      const idempotency = idempotencyClaim(body.idempotency_key, 'hold', { to: payee, amount: micros.toString(), ref, expires_in_seconds: seconds });
      const data = await sequencer.submit({
        kind: 'hold',
        payer: auth.did,
        payee,
        micros,
        ref,
        expiresAt,
        idempotency,
        nonce: auth.via === 'intent' ? auth.nonce : undefined,
      });
      return { ok: true as const, data };
    },
  });

  app.post('/v1/hold/:id/capture', {
    schema: {
      description: 'The beneficiary takes up to the held amount; the rest returns to the payer.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      body: Type.Object({ amount: Type.Optional(AmountText), idempotency_key: Type.Optional(IdempotencyKey) }, { additionalProperties: false }),
      response: { 200: okSchema(MovementResults.capture) },
    },
    handler: async (request) => {
      const holdId = uuidInput(request.params.id, 'id');
      const body = request.body;
      const micros = body.amount === undefined ? undefined : amountInput(body.amount);
      const idempotency = idempotencyClaim(body.idempotency_key, 'capture', { hold_id: holdId, amount: micros?.toString() ?? null });
      const data = await sequencer.submit({ kind: 'capture', caller: tokenDid(request), holdId, micros, idempotency });
      return { ok: true as const, data };
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
      const holdId = uuidInput(request.params.id, 'id');
      const idempotency = idempotencyClaim(request.body.idempotency_key, 'release', { hold_id: holdId });
      const data = await sequencer.submit({ kind: 'release', caller: tokenDid(request), holdId, idempotency });
      return { ok: true as const, data };
    },
  });

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
      const auth = authorise(request, clock, body.intent, 'withdraw');
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
