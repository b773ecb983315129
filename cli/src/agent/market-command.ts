import { loadAgentKey } from './agent-key-file.ts';
import { amountArgument, integerArgument, jsonObjectArgument, parseCommand, positionals } from './command-args.ts';
import { printJson, printTable, text, UsageError } from './command-output.ts';
import { type CommandContext, useService } from './service-settings.ts';

const usage =
  'platform market search [<words>…] [--kind <kind>] [--limit <n>] | market quote <service id> <operation> [--units <n>] | market call <service id> <operation> [--args <json>] [--quote <id>] [--max-payment <amount>] [--idempotency-key <key>]';

const options = {
  url: { type: 'string' },
  kind: { type: 'string' },
  limit: { type: 'string' },
  units: { type: 'string' },
  args: { type: 'string' },
  quote: { type: 'string' },
  'max-payment': { type: 'string' },
  'idempotency-key': { type: 'string' },
} as const;

/** Search and quote never pay; the client still wants a guard, so theirs is the smallest amount there is. */
const noPayment = '0.000001';

type Operation = { name: string; price_per_unit: string; unit: string; max_units: number };

/**
 * `platform market search|quote|call`: discovery (public), a signed quote, and a paid call whose hold the client
 * signs only when the marketplace's terms are at most --max-payment (or PLATFORM_MARKET_MAX_PAYMENT); a call
 * without either is a usage error, so nothing is ever paid without a stated limit.
 */
export async function run(command: string, args: readonly string[], context: CommandContext): Promise<number> {
  // Hosted mode's developer commands take options of their own.
  if (args[0] === 'deploy' || args[0] === 'logs') return (await import('./market-hosted-command.ts')).run(command, args, context);
  const { values, positionals: words } = parseCommand(args, options);
  const [verb, ...rest] = positionals(words, 1, usage, { rest: true });
  const { MarketplaceClient } = await import('@platform/client/marketplace-client');
  const market = (maxPayment: string, key = loadAgentKey(context.env).key) =>
    new MarketplaceClient({ baseUrl: useService(context, 'marketplace', values.url).url, key, maxPayment });
  if (verb === 'search') {
    const limit = integerArgument(values.limit, '--limit', { min: 1, max: 100 });
    const request = {
      ...(rest.length > 0 ? { query: rest.join(' ') } : {}),
      ...(values.kind ? { filters: { kind: values.kind } } : {}),
      ...(limit ? { limit } : {}),
    };
    // Discovery is public: the client never signs with this throwaway key, so searching needs no key file.
    const { generateAgentKey } = await import('@platform/client/agent-key');
    const found = await market(noPayment, generateAgentKey()).discover(request);
    if (values.json) printJson(found);
    else
      printTable(
        ['id', 'slug', 'name', 'kind', 'score', 'operations'],
        (found.results as Array<Record<string, unknown> & { operations: Operation[] }>).map((item) => [
          text(item.id),
          text(item.slug),
          text(item.display_name),
          text(item.kind),
          text(item.score),
          item.operations.map((operation) => `${operation.name} ${operation.price_per_unit}/${operation.unit}`).join(', '),
        ]),
      );
    return 0;
  }
  if (verb === 'quote') {
    const [serviceId, operation] = positionals(rest, 2, usage) as [string, string];
    const units = integerArgument(values.units, '--units', { min: 1, max: 1_000_000 });
    const quote = await market(noPayment).quote(serviceId, operation, String(units ?? 1));
    if (values.json) printJson(quote);
    else
      printTable(
        ['quote', 'operation', 'unit price', 'units', 'at most', 'expires'],
        [[quote.quote_id, quote.operation, quote.unit_price_settle, quote.estimated_units, quote.max_total_settle, quote.expires_at]],
      );
    return 0;
  }
  if (verb !== 'call') throw new UsageError(`usage: ${usage}`);
  const [serviceId, operation] = positionals(rest, 2, usage) as [string, string];
  const callArgs = jsonObjectArgument(values.args, '--args');
  const maxPayment = values['max-payment'] ?? (context.env.PLATFORM_MARKET_MAX_PAYMENT || undefined);
  if (maxPayment === undefined) throw new UsageError('a paid call needs --max-payment <amount> (or PLATFORM_MARKET_MAX_PAYMENT): the most it may hold');
  amountArgument(maxPayment, '--max-payment');
  const answer = await market(maxPayment).invoke(serviceId, {
    operation,
    ...(callArgs ? { args: callArgs } : {}),
    ...(values.quote ? { quoteId: values.quote } : {}),
    ...(values['idempotency-key'] ? { idempotencyKey: values['idempotency-key'] } : {}),
  });
  if (values.json) printJson(answer);
  else {
    printTable(['invocation', 'status', 'cost', 'seq'], [[text(answer.invocation_id), text(answer.status), text(answer.cost), text(answer.settlement_seq)]]);
    console.log(`\n${JSON.stringify(answer.result, null, 2)}`);
  }
  return 0;
}
