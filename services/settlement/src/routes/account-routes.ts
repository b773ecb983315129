import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { safeEqual } from '@platform/kit/auth/safe-equal';
import { okSchema } from '@platform/kit/envelope';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { documentSecurity } from '@platform/kit/http/openapi';
import { bearerFrom } from '@platform/kit/http/transport-bearer';
import { payoutBindingMessage } from '@platform/kit/payout-binding';
import { did, evmAddress, hex32, nullable, untyped } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import { checkPayoutBinding } from '../accounts/payout-binding.ts';
import { accountHash } from '../balances/balance-tree.ts';
import { emptyAccountView } from '../ledger/views.ts';
import { tokenDid } from './authorise.ts';
import { AmountText, amountInput, didInput, integerInput, pageLimit } from './inputs.ts';
import { AccountView, BatchView, HoldView, MovementResults } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

const FaucetResult = untyped(
  Type.Union([
    MovementResults.deposit,
    Type.Object(
      { deposit: Type.Null(), status: Type.Literal('awaiting_confirmations') },
      { description: 'On a live chain, the deposit is sent but not yet deep enough to credit' },
    ),
    Type.Object({ deposit: Type.Null(), tx_hash: hex32(), status: Type.Literal('awaiting_credit') }, { description: 'Confirmed, not yet credited' }),
  ]),
);

/** The principal's own account: balance, deposit instructions, payout binding, force-settle, dev faucet. */
export function registerAccountRoutes(app: ServiceApp, deps: RouteDeps & { dev: boolean }): void {
  const { sequencer, reads, chain } = deps;

  // The caller's balance, held amount, escrow bound and payout address (zeros before the first credit).
  app.get('/v1/balance', {
    schema: { description: 'The caller’s balance, held amount, escrow bound and payout address.', response: { 200: okSchema(AccountView) } },
    handler: async (request) => {
      const did = tokenDid(request);
      return { ok: true as const, data: (await reads.account(did)) ?? emptyAccountView(did) };
    },
  });

  // The caller's open holds on both sides: what it has locked for others (payer) and what others locked for it (payee).
  app.get('/v1/holds', {
    schema: {
      description: 'The caller’s open holds, as payer or payee, newest first (paged by created_seq).',
      querystring: Type.Object({ limit: Type.Optional(Type.String()), before: Type.Optional(Type.String()) }),
      response: {
        200: okSchema(
          Type.Object({
            holds: Type.Array(HoldView),
            next_before: nullable(Type.Integer({ description: '`before` for the next page; null on the last' })),
          }),
        ),
      },
    },
    handler: async (request) => {
      const did = tokenDid(request);
      const limit = pageLimit(request.query.limit);
      const before = integerInput(request.query.before, 'before', { min: 1, max: Number.MAX_SAFE_INTEGER });
      return { ok: true as const, data: await reads.openHolds(did, { limit, before }) };
    },
  });

  // Where to deposit and the DID claim the vault deposit must carry. Asking registers the claim: the vault's events
  // name the account by hash only, and this is how the watcher learns which DID a hash is.
  app.get('/v1/deposit', {
    schema: {
      description: 'Where and how to deposit on chain; asking registers the DID’s claim so the watcher credits it.',
      response: {
        200: okSchema(
          Type.Object({
            chain_id: Type.Integer(),
            vault_address: nullable(evmAddress()),
            token_address: nullable(evmAddress()),
            token_decimals: Type.Integer(),
            did: did(),
            claim: Type.Object({ account: hex32('keccak256 of the DID'), call: Type.String(), did_hash: hex32('What the vault deposit must carry') }),
            steps: Type.Array(Type.String()),
            confirmations: untyped(nullable(Type.Integer({ description: 'How deep a deposit must be before it is credited (live chain)' }))),
          }),
        ),
      },
    },
    handler: async (request) => {
      const did = tokenDid(request);
      await chain.registerClaim(did);
      return {
        ok: true as const,
        data: {
          chain_id: chain.chainId,
          vault_address: chain.vaultAddress,
          token_address: chain.tokenAddress,
          token_decimals: 6,
          did,
          // The vault credits `account`: the same keccak256(DID) the balance tree uses.
          claim: { account: accountHash(did), call: 'deposit(uint256 amount, bytes32 didHash)', did_hash: accountHash(did) },
          steps: ['approve(vault_address, amount) on the token', 'deposit(amount, claim.did_hash) on the vault'],
          confirmations: chain.info().confirmations ?? null,
        },
      };
    },
  });

  app.post('/v1/account/evm', {
    schema: {
      description: 'Bind the payout address, proven by its EIP-191 signature over the binding message.',
      body: Type.Object(
        { address: Type.String({ maxLength: 64 }), signature: Type.String({ maxLength: 200, description: 'personal_sign over the binding message' }) },
        { additionalProperties: false },
      ),
      response: {
        200: okSchema(
          untyped(Type.Object({ did: did(), payout_address: evmAddress(), message: Type.String({ description: 'The binding text that was signed' }) })),
        ),
      },
    },
    handler: async (request) => {
      const did = tokenDid(request);
      const checked = await checkPayoutBinding(did, request.body.address, request.body.signature, chain.chainId);
      if (!checked.ok) throw invalidRequest(checked.reason, checked.expectedMessage ? { expected_message: checked.expectedMessage } : undefined);
      const data = await sequencer.submit({ kind: 'bind', did, address: checked.address });
      return { ok: true as const, data: { ...(data as object), message: payoutBindingMessage(did, checked.address, chain.chainId) } };
    },
  });

  // Close the open window into a batch now (no batch when the window is empty).
  app.post('/v1/settle', {
    schema: {
      description: 'Close the open window into a batch now; no batch when the window is empty.',
      response: { 200: okSchema(untyped(Type.Object({ closed: Type.Boolean(), batch: nullable(BatchView) }))) },
    },
    handler: async (request) => {
      tokenDid(request);
      return { ok: true as const, data: await sequencer.submit({ kind: 'close', reason: 'settle' }) };
    },
  });

  if (deps.dev) {
    app.post('/v1/dev/faucet', {
      schema: {
        description: 'SETTLEMENT_DEV only: credit the caller: a vault deposit on a live chain, a recorded one without.',
        body: Type.Object({ amount: AmountText }, { additionalProperties: false }),
        response: { 200: okSchema(FaucetResult) },
      },
      handler: async (request) => {
        const did = tokenDid(request);
        const micros = amountInput(request.body.amount);
        // With a vault, a real deposit on chain (minted by the development token), credited by the watcher.
        if (chain.fund) return { ok: true as const, data: await chain.fund(did, micros) };
        const txHash = `faucet:${crypto.randomUUID()}`;
        const data = await sequencer.submit({ kind: 'deposit', did, micros, source: 'faucet', txHash, logIndex: 0 });
        return { ok: true as const, data };
      },
    });
  }
}

/**
 * The operator's door: deposits credited by hand (without a live vault), idempotent on (tx_hash, log_index). Its
 * bearer is checked when the request arrives, before its body is read: without the token, nothing about the body
 * is told (an empty body is 401, not 400).
 */
export function registerOperatorRoutes(app: ServiceApp, deps: RouteDeps & { operatorToken: string }): void {
  app.register(async (scope) => {
    const operator = scope.withTypeProvider<TypeBoxTypeProvider>();
    documentSecurity(operator, 'operatorBearer', { type: 'http', scheme: 'bearer', description: 'SETTLEMENT_OPERATOR_TOKEN' }, () => 'required');
    operator.addHook('onRequest', async (request) => {
      if (deps.operatorToken === '') throw new ServiceError('forbidden', 'operator routes are disabled: SETTLEMENT_OPERATOR_TOKEN is not set');
      const presented = bearerFrom(request);
      if (presented === undefined || !safeEqual(presented, deps.operatorToken))
        throw new ServiceError('unauthorized', 'missing or invalid operator token (Authorization: Bearer <token>)');
    });
    registerOperatorDeposits(operator, deps);
  });
}

function registerOperatorDeposits(app: ServiceApp, deps: RouteDeps): void {
  app.post('/v1/operator/deposits', {
    schema: {
      description: 'Credit an on-chain deposit. A replay of the same event returns the original credit.',
      body: Type.Object(
        {
          did: Type.String({ maxLength: 256 }),
          amount: AmountText,
          tx_hash: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }),
          log_index: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }),
        },
        { additionalProperties: false },
      ),
      response: { 200: okSchema(untyped(MovementResults.deposit)) },
    },
    handler: async (request) => {
      if (deps.chain.live)
        throw new ServiceError('conflict', 'with a live vault, deposits are credited by its watcher only', { details: { reason: 'chain_watcher' } });
      const did = didInput(request.body.did, 'did');
      const micros = amountInput(request.body.amount);
      const data = await deps.sequencer.submit({
        kind: 'deposit',
        did,
        micros,
        source: 'chain',
        txHash: request.body.tx_hash.toLowerCase(),
        logIndex: request.body.log_index,
      });
      return { ok: true as const, data };
    },
  });
}
