import type { AlarmView, CreateAlarm } from '@platform/client/scheduler-client';
import { loadAgentKey } from './agent-key-file.ts';
import { integerArgument, jsonObjectArgument, parseCommand, positionals } from './command-args.ts';
import { printFields, printJson, printTable, UsageError } from './command-output.ts';
import { type CommandContext, useService } from './service-settings.ts';

// One line, as every failure is: the options are in the README.
const usage =
  'platform alarm create "<wake message>" (--in <90s|10m|2h|1d> | --at <ISO time> | --cron "<5 fields>") [--timezone --label --conversation --payload --idempotency-key --max-failures] | alarm list [--limit <n>] | alarm cancel <id>';

const options = {
  url: { type: 'string' },
  in: { type: 'string' },
  at: { type: 'string' },
  cron: { type: 'string' },
  timezone: { type: 'string' },
  label: { type: 'string' },
  conversation: { type: 'string' },
  payload: { type: 'string' },
  'idempotency-key': { type: 'string' },
  'max-failures': { type: 'string' },
  limit: { type: 'string' },
} as const;

const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90`, `90s`, `10m`, `2h` or `1d` as seconds. */
function durationSeconds(text: string): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text);
  if (!match) throw new UsageError('--in must be a duration such as 90, 90s, 10m, 2h or 1d');
  return Number(match[1]) * (unitSeconds[match[2] || 's'] as number);
}

/** The one schedule the flags give: exactly one of --in, --at, --cron. */
function schedule(values: {
  in?: string;
  at?: string;
  cron?: string;
  timezone?: string;
}): Pick<CreateAlarm, 'kind' | 'delay_seconds' | 'fire_at' | 'cron_expr' | 'timezone'> {
  const given = [values.in, values.at, values.cron].filter((value) => value !== undefined).length;
  if (given !== 1) throw new UsageError('give exactly one of --in, --at or --cron');
  if (values.timezone !== undefined && values.cron === undefined) throw new UsageError('--timezone goes with --cron');
  if (values.in !== undefined) return { kind: 'once', delay_seconds: durationSeconds(values.in) };
  if (values.at !== undefined) return { kind: 'once', fire_at: values.at };
  return { kind: 'cron', cron_expr: values.cron as string, ...(values.timezone ? { timezone: values.timezone } : {}) };
}

/** `platform alarm create|list|cancel`: the agent's own alarms on the scheduler, after the DID handshake. */
export async function run(_command: string, args: readonly string[], context: CommandContext): Promise<number> {
  const { values, positionals: words } = parseCommand(args, options);
  const [verb, ...rest] = positionals(words, 1, usage, { rest: true });
  let request: () => Promise<unknown>;
  let show: (answer: never) => void;
  if (verb === 'create') {
    const message = rest.join(' ').trim();
    if (message === '') throw new UsageError(`the wake message is required; usage: ${usage}`);
    const alarm: CreateAlarm = {
      ...schedule(values),
      wake_message: message,
      ...(values.label !== undefined ? { label: values.label } : {}),
      ...(values.conversation !== undefined ? { conversation_id: values.conversation } : {}),
      ...(values['idempotency-key'] !== undefined ? { idempotency_key: values['idempotency-key'] } : {}),
    };
    const payload = jsonObjectArgument(values.payload, '--payload');
    if (payload) alarm.payload = payload;
    const maxFailures = integerArgument(values['max-failures'], '--max-failures', { min: 1, max: 1000 });
    if (maxFailures !== undefined) alarm.max_failures = maxFailures;
    request = async () => (await client(context, values.url)).createAlarm(alarm);
    show = (created: { id: string; next_fire_at: string; status: string }) =>
      printTable(['id', 'status', 'next fire'], [[created.id, created.status, created.next_fire_at]]);
  } else if (verb === 'list') {
    positionals(rest, 0, usage);
    const limit = integerArgument(values.limit, '--limit', { min: 1, max: 500 });
    request = async () => (await client(context, values.url)).listAlarms(limit);
    show = (list: { alarms: AlarmView[] }) =>
      printTable(
        ['id', 'kind', 'status', 'next fire', 'label', 'wake message'],
        list.alarms.map((alarm) => [
          alarm.id,
          alarm.kind === 'cron' ? `cron ${alarm.cron_expr}` : 'once',
          alarm.status,
          alarm.next_fire_at,
          alarm.label,
          alarm.wake_message,
        ]),
      );
  } else if (verb === 'cancel') {
    const [id] = positionals(rest, 1, 'platform alarm cancel <id>');
    request = async () => (await client(context, values.url)).cancelAlarm(id as string);
    show = (alarm: AlarmView) => printFields({ id: alarm.id, status: alarm.status, label: alarm.label, wake_message: alarm.wake_message });
  } else throw new UsageError(`usage: ${usage}`);
  const answer = await request();
  if (values.json) printJson(answer);
  else show(answer as never);
  return 0;
}

async function client(context: CommandContext, urlFlag: string | undefined) {
  const { url, token } = useService(context, 'scheduler', urlFlag);
  const { key } = loadAgentKey(context.env);
  const { SchedulerClient } = await import('@platform/client/scheduler-client');
  return new SchedulerClient({ baseUrl: url, key, ...(token ? { transportToken: token } : {}) });
}
