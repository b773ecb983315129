import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { oneOf } from '@platform/kit/wire-schemas';
import type { FastifyInstance } from 'fastify';
import { type TProperties, type TSchema, Type } from 'typebox';
import { formatCredit } from '../metering/credit.ts';
import { rollupDimensions } from '../operator/operator.repository.ts';
import { adminRoute, Credit, DayText, PageLimit, RangeQuery, rangeInput } from './admin-inputs.ts';
import type { RouteDeps } from './route-deps.ts';

const listOf = <T extends TSchema>(row: T, more: TProperties = {}) => Type.Object({ object: oneOf(['list']), ...more, data: Type.Array(row) });
const nullableText = Type.Union([Type.String(), Type.Null()]);
const SpendRow = Type.Object({
  actor: Type.String(),
  day: DayText,
  spent_credit: Credit,
  reserved_credit: Credit,
  limit_credit: Credit,
  calls: Type.Integer(),
});
const RollupRow = Type.Object({
  key: Type.String({ description: 'The intent, goal, kind_route, model or slot' }),
  calls: Type.Integer(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cost_credit: Credit,
});
const LedgerRow = Type.Object({
  id: Type.String({ format: 'uuid' }),
  actor: Type.String(),
  day: DayText,
  created_at: Type.String({ format: 'date-time' }),
  slot: Type.String(),
  model: Type.String(),
  kind: oneOf(['chat', 'embedding']),
  streamed: Type.Boolean(),
  rate_table_v: Type.Integer({ description: 'The rate card version that priced it' }),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cost_credit: Credit,
  basis: oneOf(['usage', 'reservation'], 'usage, or the reservation when no usage arrived'),
  intent_id: nullableText,
  goal_id: nullableText,
  kind_route: nullableText,
});

/** The operator's reads: spend per actor and day, rollups by intent, goal and more, and the ledger rows themselves. */
export function registerAdminReadRoutes(scope: FastifyInstance, deps: RouteDeps): void {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/admin/spend', {
    ...adminRoute,
    schema: {
      description: 'Spend per actor and UTC day, newest day first; `from`/`to` bound the days (inclusive).',
      querystring: RangeQuery,
      response: { 200: listOf(SpendRow) },
    },
    handler: async (request) => {
      const rows = await deps.operator.spend(rangeInput(request.query), deps.defaultCapUnits, request.query.limit ?? 100);
      return {
        object: 'list',
        data: rows.map((row) => ({
          actor: row.actor,
          day: row.day,
          spent_credit: formatCredit(row.spentUnits),
          reserved_credit: formatCredit(row.reservedUnits),
          limit_credit: formatCredit(row.limitUnits),
          calls: row.calls,
        })),
      };
    },
  });

  app.get('/admin/rollups', {
    ...adminRoute,
    schema: {
      description: 'Debited cost, calls and tokens grouped by intent, goal, kind_route, model or slot; largest cost first.',
      querystring: Type.Object({ ...RangeQuery.properties, by: Type.Union(rollupDimensions.map((by) => Type.Literal(by))) }, { additionalProperties: false }),
      response: { 200: listOf(RollupRow, { by: Type.String() }) },
    },
    handler: async (request) => {
      const rows = await deps.operator.rollup(request.query.by, rangeInput(request.query), request.query.limit ?? 100);
      return {
        object: 'list',
        by: request.query.by,
        data: rows.map((row) => ({
          key: row.key,
          calls: row.calls,
          input_tokens: row.inputTokens,
          output_tokens: row.outputTokens,
          cost_credit: formatCredit(row.costUnits),
        })),
      };
    },
  });

  app.get('/admin/ledger', {
    ...adminRoute,
    schema: {
      description: 'Ledger rows newest first, each with the rate card version that priced it; `before` (a row id) pages.',
      querystring: Type.Object(
        { ...RangeQuery.properties, limit: Type.Optional(PageLimit), before: Type.Optional(Type.String({ format: 'uuid' })) },
        { additionalProperties: false },
      ),
      response: { 200: listOf(LedgerRow, { next_before: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]) }) },
    },
    handler: async (request) => {
      const rows = await deps.operator.ledger(rangeInput(request.query), request.query.limit ?? 100, request.query.before);
      return {
        object: 'list',
        data: rows.map((row) => ({
          id: row.id,
          actor: row.actor,
          day: row.day,
          created_at: row.createdAt.toISOString(),
          slot: row.slot,
          model: row.model,
          kind: row.kind,
          streamed: row.streamed,
          rate_table_v: row.rateTableVersion,
          input_tokens: row.inputTokens,
          output_tokens: row.outputTokens,
          cost_credit: formatCredit(row.costUnits),
          basis: row.basis,
          intent_id: row.intentId,
          goal_id: row.goalId,
          kind_route: row.kindRoute,
        })),
        next_before: rows.length === (request.query.limit ?? 100) ? (rows.at(-1)?.id ?? null) : null,
      };
    },
  });
}
