import type { AgentKey } from '@platform/client/agent-key';
import { MarketplaceClient } from '@platform/client/marketplace-client';
import type { ServiceLink } from '../config.ts';
import { BuiltinProvider, object } from './builtin-tools.ts';
import { stepKey, type ToolProvider } from './tool-types.ts';

const amount = { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,6})?$' };

/**
 * `market.search` and `market.call` over the marketplace, as the agent's DID. A call pays by a hold the agent signs
 * only when the marketplace's terms are at most `max_payment`, the amount the user approved at the gate (money
 * always asks); the step's key is the call's idempotency key, so a re-run step is charged once. The answer carries
 * the marketplace's signed EIP-712 receipt, which names settlement's receipt of the capture.
 */
export function marketTools(link: ServiceLink, key: AgentKey): ToolProvider {
  // The limit of a paid call comes from its approved arguments; this client only searches (it could pay one micro-unit).
  const reader = new MarketplaceClient({ baseUrl: link.url, key, maxPayment: '0.000001' });
  return new BuiltinProvider('market', link.url, [
    {
      info: {
        remoteName: 'search',
        description: 'Search the marketplace for services (APIs, AI services) by words; answers listings with their operations and prices.',
        inputSchema: object({ query: { type: 'string', maxLength: 500 }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, []),
        readOnly: true,
        rerunSafe: true,
      },
      run: (args) =>
        reader.discover({
          ...(args.query === undefined ? {} : { query: String(args.query) }),
          ...(args.limit === undefined ? {} : { limit: Number(args.limit) }),
        }),
    },
    {
      info: {
        remoteName: 'call',
        description:
          'Call a marketplace service’s operation and pay for it: at most max_payment (a decimal string in the settlement unit) is held, only what the call used is captured. Answers the result, the cost and the signed receipt.',
        inputSchema: object(
          {
            service_id: { type: 'string', minLength: 1, maxLength: 64 },
            operation: { type: 'string', minLength: 1, maxLength: 128 },
            args: { type: 'object', description: 'The operation’s input' },
            max_payment: { ...amount, description: 'The most this call may cost, e.g. "0.05"' },
          },
          ['service_id', 'operation', 'max_payment'],
        ),
        readOnly: false,
        rerunSafe: true,
      },
      run: async (args, context) => {
        const market = new MarketplaceClient({ baseUrl: link.url, key, maxPayment: String(args.max_payment) });
        const invocation = await market.invoke(String(args.service_id), {
          operation: String(args.operation),
          args: (args.args ?? {}) as Record<string, unknown>,
          idempotencyKey: stepKey(context),
        });
        const receipt = await market.receipt(String(invocation.invocation_id));
        return { ...invocation, receipt };
      },
    },
  ]);
}
