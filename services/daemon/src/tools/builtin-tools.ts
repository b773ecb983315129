import { createHash } from 'node:crypto';
import type { AgentKey } from '@platform/client/agent-key';
import { MarketplaceError } from '@platform/client/marketplace-client';
import { SchedulerClient } from '@platform/client/scheduler-client';
import { ServiceCallError } from '@platform/client/service-session';
import { SettlementClient } from '@platform/client/settlement-client';
import type { ServiceLink } from '../config.ts';
import { redactUrl } from './mcp-connection.ts';
import { stepKey, type ToolCallContext, type ToolInfo, type ToolOutcome, type ToolProvider } from './tool-types.ts';

export interface Builtin {
  info: Omit<ToolInfo, 'server' | 'name'>;
  run(args: Record<string, unknown>, context: ToolCallContext): Promise<unknown>;
}

/** Tools the daemon implements itself over one of the platform's services. */
export class BuiltinProvider implements ToolProvider {
  readonly server: string;
  readonly describe: ToolProvider['describe'];
  readonly #tools: Map<string, Builtin>;

  constructor(server: string, url: string, tools: Builtin[]) {
    this.server = server;
    this.describe = { transport: 'builtin', url: redactUrl(url) };
    this.#tools = new Map(tools.map((tool) => [tool.info.remoteName, tool]));
  }

  async list(): Promise<ToolInfo[]> {
    return [...this.#tools.values()].map((tool) => ({ ...tool.info, server: this.server, name: `${this.server}.${tool.info.remoteName}` }));
  }

  async call(tool: ToolInfo, args: Record<string, unknown>, context: ToolCallContext): Promise<ToolOutcome> {
    const builtin = this.#tools.get(tool.remoteName);
    if (builtin === undefined) return { ok: false, error: `no tool ${tool.name}` };
    try {
      return { ok: true, result: await builtin.run(args, context) };
    } catch (error) {
      // The service's refusal (bad amount, unknown alarm, insufficient funds) is the tool's answer, for the model to read.
      if (error instanceof ServiceCallError || error instanceof MarketplaceError) return { ok: false, error: error.message };
      throw error;
    }
  }

  async close(): Promise<void> {}
}

export const object = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });

/** `alarms.set`, `alarms.list`, `alarms.cancel` over the scheduler, authenticated as the agent's DID. */
export function alarmTools(link: ServiceLink, key: AgentKey): ToolProvider {
  const scheduler = new SchedulerClient({ baseUrl: link.url, transportToken: link.token, key });
  return new BuiltinProvider('alarms', link.url, [
    {
      info: {
        remoteName: 'set',
        description:
          'Set an alarm that wakes this agent later with wake_message: once after delay_seconds or at fire_at (ISO 8601 with offset), or on a 5-field cron_expr in timezone.',
        inputSchema: object(
          {
            wake_message: { type: 'string', minLength: 1, maxLength: 16_384, description: 'What the agent is told when the alarm fires' },
            delay_seconds: { type: 'integer', minimum: 1, maximum: 315_360_000 },
            fire_at: { type: 'string', description: 'ISO 8601 time with an offset' },
            cron_expr: { type: 'string', maxLength: 200 },
            timezone: { type: 'string', maxLength: 64 },
            label: { type: 'string', maxLength: 200 },
          },
          ['wake_message'],
        ),
        readOnly: false,
        rerunSafe: true,
      },
      run: (args, context) =>
        scheduler.createAlarm({
          kind: args.cron_expr === undefined ? 'once' : 'cron',
          wake_message: String(args.wake_message),
          ...(args.delay_seconds === undefined ? {} : { delay_seconds: Number(args.delay_seconds) }),
          ...(args.fire_at === undefined ? {} : { fire_at: String(args.fire_at) }),
          ...(args.cron_expr === undefined ? {} : { cron_expr: String(args.cron_expr) }),
          ...(args.timezone === undefined ? {} : { timezone: String(args.timezone) }),
          ...(args.label === undefined ? {} : { label: String(args.label) }),
          conversation_id: context.conversationId,
          payload: { intent_id: context.intentId, step: context.nodeId },
          // The same key for every run of this step: a step re-run after a crash finds the alarm it made.
          idempotency_key: stepKey(context),
        }),
    },
    {
      info: {
        remoteName: 'list',
        description: 'List this agent’s alarms.',
        inputSchema: object({ limit: { type: 'integer', minimum: 1, maximum: 500 } }, []),
        readOnly: true,
        rerunSafe: true,
      },
      run: (args) => scheduler.listAlarms(args.limit === undefined ? undefined : Number(args.limit)),
    },
    {
      info: {
        remoteName: 'cancel',
        description: 'Cancel one of this agent’s alarms by id.',
        inputSchema: object({ id: { type: 'string', minLength: 1, maxLength: 64 } }, ['id']),
        readOnly: false,
        rerunSafe: true,
      },
      run: (args) => scheduler.cancelAlarm(String(args.id)),
    },
  ]);
}

/** `payments.pay` and `payments.balance` over settlement, as the agent's DID. */
export function paymentTools(link: ServiceLink, key: AgentKey): ToolProvider {
  const ledger = new SettlementClient({ baseUrl: link.url, transportToken: link.token, key });
  return new BuiltinProvider('payments', link.url, [
    {
      info: {
        remoteName: 'pay',
        description: 'Pay another agent (by DID) an amount in the settlement unit (USD, a decimal string with at most 6 places). Answers the signed receipt.',
        inputSchema: object(
          {
            to: { type: 'string', minLength: 1, maxLength: 256, description: 'The recipient DID, did:platform:<user>:<key>' },
            amount: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})(\\.[0-9]{1,6})?$', description: 'Decimal amount, e.g. "2.50"' },
          },
          ['to', 'amount'],
        ),
        readOnly: false,
        rerunSafe: true,
      },
      run: (args, context) =>
        ledger.pay({
          to: String(args.to),
          amount: String(args.amount),
          // The receipt binds the payment to the intent step that made it.
          ref: `0x${createHash('sha256').update(stepKey(context)).digest('hex')}`,
          idempotency_key: stepKey(context),
        }),
    },
    {
      info: {
        remoteName: 'balance',
        description: 'This agent’s balance, held amount and payout address.',
        inputSchema: object({}, []),
        readOnly: true,
        rerunSafe: true,
      },
      run: () => ledger.balance(),
    },
  ]);
}
