import { okSchema } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { formatAmount } from '@platform/kit/money';
import { amount, did, evmAddress, hex32, nullable, untyped, uuid } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import type { WindowSettings } from '../config.ts';
import type { SequencerKey } from '../ledger/ledger-key.ts';
import { didInput, integerInput, pageLimit, uuidInput } from './inputs.ts';
import { AccountView, AnchorView, BatchView, ChainInfo, HoldView, SignedReceipt, SupplyView, TransferView, WithdrawalView } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

const maxSeq = Number.MAX_SAFE_INTEGER;
const root = /^0x[0-9a-fA-F]{64}$/;
const notFound = (what: string) => new ServiceError('not_found', `${what} not found`);
const Page = Type.Object({ limit: Type.Optional(Type.String()), before: Type.Optional(Type.String()) });
const nextBefore = nullable(Type.Integer({ description: '`before` for the next page; null on the last' }));
const hexList = (description: string) => Type.Array(hex32(), { description });
const Info = Type.Object({
  service: Type.String(),
  version: Type.String(),
  role: Type.String({ description: 'leader or standby' }),
  chain_id: Type.Integer(),
  anchor_address: nullable(evmAddress('The vault, which stores the anchors')),
  vault_address: nullable(evmAddress()),
  token_address: nullable(evmAddress()),
  chain: untyped(ChainInfo),
  sequencer_public_key: Type.String({ description: 'ed25519, 64 hex: signs receipts and checkpoints' }),
  checkpoint_origin: Type.String(),
  checkpoint_verifier_key: Type.String({ description: 'The C2SP note verifier key' }),
  window: Type.Object({ seconds: Type.Number(), max_receipts: Type.Integer(), immediate_amount: amount() }),
  receipt_domain: Type.String(),
});
const ReceiptEvidence = Type.Object({
  receipt: SignedReceipt,
  leaf_index: Type.Integer({ description: 'seq - 1' }),
  batch: nullable(BatchView),
  inclusion_proof: nullable(hexList('RFC 9162 inclusion proof against the batch’s log root; null until a batch covers it')),
  withdrawal: Type.Optional(WithdrawalView),
});

/** The explorer: no auth, never gated by the fleet token, rate-limited as reads. */
export function registerPublicRoutes(app: ServiceApp, deps: RouteDeps & { key: SequencerKey; window: WindowSettings; version: string }): void {
  const { reads, chain, key, window } = deps;

  app.get('/v1/info', {
    schema: { description: 'The keys, the chain and the window settings a verifier needs.', response: { 200: okSchema(Info) } },
    handler: async () => ({
      ok: true as const,
      data: {
        service: 'settlement',
        version: deps.version,
        role: deps.sequencer.role,
        chain_id: chain.chainId,
        // The vault stores the anchors: one contract holds the reserve and the roots.
        anchor_address: chain.vaultAddress,
        vault_address: chain.vaultAddress,
        token_address: chain.tokenAddress,
        chain: chain.info(),
        sequencer_public_key: key.publicKeyHex,
        checkpoint_origin: key.origin,
        checkpoint_verifier_key: key.verifierKey,
        window: { seconds: window.seconds, max_receipts: window.maxReceipts, immediate_amount: formatAmount(window.immediateMicros) },
        receipt_domain: 'platform-settlement-receipt-v1\n',
      },
    }),
  });

  const supplySchema = { description: 'The ledger’s supply beside the reserve that backs it.', response: { 200: okSchema(SupplyView) } };
  app.get('/v1/supply', { schema: supplySchema, handler: async () => ({ ok: true as const, data: await reads.supply() }) });

  app.get('/v1/batches', {
    schema: { querystring: Page, response: { 200: okSchema(Type.Object({ batches: Type.Array(BatchView), next_before: nextBefore })) } },
    handler: async (request) => {
      const limit = pageLimit(request.query.limit);
      const before = integerInput(request.query.before, 'before', { min: 1, max: maxSeq });
      return { ok: true as const, data: await reads.batches({ limit, before }) };
    },
  });

  app.get('/v1/batch/:id', {
    schema: { params: Type.Object({ id: Type.String({ maxLength: 64 }) }), response: { 200: okSchema(BatchView) } },
    handler: async (request) => {
      const batch = await reads.batch(uuidInput(request.params.id, 'id'));
      if (!batch) throw notFound('batch');
      return { ok: true as const, data: batch };
    },
  });

  app.get('/v1/batch/:id/balance/:did', {
    schema: {
      params: Type.Object({ id: Type.String({ maxLength: 64 }), did: Type.String({ maxLength: 256 }) }),
      response: {
        200: okSchema(
          Type.Object({
            batch_id: uuid(),
            balance_root: hex32(),
            did: did(),
            amount: amount(),
            payout_address: nullable(evmAddress()),
            leaf: Type.Object({
              tag: hex32(),
              account: hex32(),
              payout: evmAddress(),
              balance: Type.String({ description: 'Micros, decimal' }),
              hash: hex32(),
            }),
            proof: hexList('OpenZeppelin Merkle proof of the leaf'),
          }),
        ),
      },
    },
    handler: async (request) => {
      const proof = await reads.balanceProof(uuidInput(request.params.id, 'id'), didInput(request.params.did, 'did'));
      if (!proof) throw notFound('batch');
      return { ok: true as const, data: proof };
    },
  });

  app.get('/v1/withdrawal/:id', {
    schema: {
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      response: {
        200: okSchema(
          Type.Object({
            withdrawal: WithdrawalView,
            batch_number: nullable(Type.Integer()),
            anchored: Type.Boolean(),
            payout: nullable(
              Type.Object(
                {
                  withdrawal_id: hex32(),
                  to: evmAddress(),
                  amount: Type.String({ description: 'Micros, decimal' }),
                  proof: hexList('Against the withdrawals root'),
                  batch: nullable(Type.Integer()),
                },
                { description: 'What the vault’s payout takes, once the batch that burned it is anchored' },
              ),
            ),
          }),
        ),
      },
    },
    handler: async (request) => {
      const withdrawal = await reads.withdrawal(uuidInput(request.params.id, 'id'));
      if (!withdrawal) throw notFound('withdrawal');
      return { ok: true as const, data: withdrawal };
    },
  });

  app.get('/v1/anchor/:root', {
    schema: {
      params: Type.Object({ root: Type.String({ maxLength: 80 }) }),
      response: {
        200: okSchema(
          Type.Object({
            root: hex32(),
            batch_id: uuid(),
            batch_number: Type.Integer(),
            log_size: Type.Integer(),
            log_root: hex32(),
            balance_root: hex32(),
            checkpoint: Type.String(),
            ...AnchorView.properties,
          }),
        ),
      },
    },
    handler: async (request) => {
      if (!root.test(request.params.root)) throw new ServiceError('invalid_request', 'root must be 0x + 64 hex (a batch log root or balance root)');
      const anchor = await reads.anchor(request.params.root.toLowerCase());
      if (!anchor) throw notFound('anchor');
      return { ok: true as const, data: anchor };
    },
  });

  app.get('/v1/receipt/:seq', {
    schema: { params: Type.Object({ seq: Type.String({ maxLength: 20 }) }), response: { 200: okSchema(ReceiptEvidence) } },
    handler: async (request) => {
      const seq = integerInput(request.params.seq, 'seq', { min: 1, max: maxSeq }) as number;
      const receipt = await reads.receipt(seq);
      if (!receipt) throw notFound('receipt');
      return { ok: true as const, data: receipt };
    },
  });

  app.get('/v1/checkpoint', {
    schema: {
      description: 'The latest batch’s signed checkpoint.',
      response: { 200: okSchema(Type.Object({ batch_id: uuid(), log_size: Type.Integer(), log_root: hex32(), checkpoint: Type.String() })) },
    },
    handler: async () => {
      const latest = await reads.latestBatch();
      if (!latest) throw notFound('checkpoint (no batch has closed yet)');
      return { ok: true as const, data: { batch_id: latest.id, log_size: Number(latest.log_size), log_root: latest.log_root, checkpoint: latest.checkpoint } };
    },
  });

  app.get('/v1/log/consistency', {
    schema: {
      querystring: Type.Object({ from: Type.String({ maxLength: 20 }), to: Type.Optional(Type.String({ maxLength: 20 })) }),
      response: { 200: okSchema(Type.Object({ from: Type.Integer(), to: Type.Integer(), proof: hexList('RFC 9162 consistency proof') })) },
    },
    handler: async (request) => {
      const from = integerInput(request.query.from, 'from', { min: 1, max: maxSeq }) as number;
      const to = integerInput(request.query.to, 'to', { min: 1, max: maxSeq });
      return { ok: true as const, data: await reads.consistency(from, to) };
    },
  });

  app.get('/v1/transfers', {
    schema: {
      querystring: Type.Object({ ...Page.properties, did: Type.Optional(Type.String({ maxLength: 256 })) }),
      response: { 200: okSchema(Type.Object({ transfers: Type.Array(TransferView), next_before: nextBefore })) },
    },
    handler: async (request) => {
      const limit = pageLimit(request.query.limit);
      const before = integerInput(request.query.before, 'before', { min: 1, max: maxSeq });
      const did = request.query.did === undefined ? undefined : didInput(request.query.did, 'did');
      return { ok: true as const, data: await reads.transfers({ limit, before, did }) };
    },
  });

  app.get('/v1/account/:did', {
    schema: { params: Type.Object({ did: Type.String({ maxLength: 256 }) }), response: { 200: okSchema(AccountView) } },
    handler: async (request) => {
      const account = await reads.account(didInput(request.params.did, 'did'));
      if (!account) throw notFound('account');
      return { ok: true as const, data: account };
    },
  });

  app.get('/v1/hold/:id', {
    schema: { params: Type.Object({ id: Type.String({ maxLength: 64 }) }), response: { 200: okSchema(HoldView) } },
    handler: async (request) => {
      const hold = await reads.hold(uuidInput(request.params.id, 'id'));
      if (!hold) throw notFound('hold');
      return { ok: true as const, data: hold };
    },
  });
}
