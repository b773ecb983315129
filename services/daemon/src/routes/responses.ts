import { okSchema } from '@platform/kit/envelope';
import { did, isoTime, nullable, openObject, untyped, uuid } from '@platform/kit/wire-schemas';
import { type TSchema, Type } from 'typebox';

/**
 * The response schemas of the daemon's routes, written from what they answer (`views.ts`, the intent book, the chat
 * turn, the transcripts). They serialise too: a member missing here is not sent. The journal's envelope bodies and the
 * intent state folded from them are open: they grow with the rail, and the chain is the record.
 */

/** `{ok: true, data}`; the data is typed `unknown` for the handler, which builds it from the rail's own types. */
export const answers = <T extends TSchema>(data: T) => okSchema(untyped(data));

const intentId = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 hex of its first envelope' });

export const PendingGate = Type.Object({
  node_id: Type.String(),
  question: Type.String(),
  options: Type.Array(Type.String()),
  expires_at: isoTime(),
  guards: Type.Optional(Type.String()),
});

/** The async status of an intent (`views.ts` statusView). */
export const IntentStatus = Type.Object({
  intent_id: intentId,
  status: Type.String({ description: 'queued, compiling, planning, walking, gated, completed, failed, cancelled, ...' }),
  result: Type.Object(
    { answer: Type.String({ description: 'Empty until completed' }) },
    { additionalProperties: true, description: 'With error, reason and clarification when it did not complete' },
  ),
  pending_gates: Type.Array(PendingGate),
  queue_position: nullable(Type.Integer()),
  walking: Type.Boolean(),
  ended: Type.Boolean(),
  created_at: isoTime(),
  updated_at: isoTime(),
});

export const Queued = Type.Object({ intent_id: intentId, status: Type.String(), queue_position: nullable(Type.Integer()) });

export const IntentList = Type.Object({
  intents: Type.Array(
    Type.Object({
      id: intentId,
      order: uuid('Creation order within a millisecond'),
      status: Type.String(),
      created_at: isoTime(),
      updated_at: isoTime(),
      prose: Type.String(),
      via: Type.String({ description: 'Where it came from: chat, message, wake, ...' }),
    }),
  ),
  next_before: nullable(isoTime('before for the next page; null on the last')),
});

const Envelope = Type.Object({
  intent_id: nullable(intentId),
  seq: Type.Integer(),
  kind: Type.String(),
  at: isoTime(),
  prev: nullable(Type.String({ description: 'Hash of the previous envelope' })),
  body: openObject('What the kind records'),
  signature: Type.String({ description: 'ed25519 by the daemon’s key' }),
});

export const IntentDetail = Type.Object({
  id: intentId,
  status: Type.String(),
  public_key: Type.String({ description: 'The daemon’s ed25519 key, which verifies the chain' }),
  envelopes: Type.Array(Envelope),
  state: openObject('The intent’s state folded from the chain: steps, gates, compiled goal, result'),
});

export const GateAnswer = Type.Object({
  recorded: Type.Boolean({ description: 'False when the gate was already answered' }),
  gate: Type.Object({
    node_id: Type.String(),
    status: Type.String(),
    approved: Type.Boolean(),
    answer: Type.String(),
    answered_by: nullable(Type.String()),
    answered_at: nullable(isoTime()),
  }),
});

export const ChatTurn = Type.Object({
  conversation_id: Type.String(),
  reply: Type.String(),
  intent_id: nullable(intentId),
  recalled: Type.Integer({ description: 'Memories recalled for the turn' }),
  remembered: Type.Integer({ description: 'Facts remembered from it' }),
});

export const Conversations = Type.Object({ conversations: Type.Array(Type.Object({ conversation_id: Type.String(), created_at: isoTime() })) });

export const Transcript = Type.Object({
  conversation_id: Type.String(),
  entries: Type.Array(
    Type.Object({
      seq: Type.Integer(),
      at: isoTime(),
      role: Type.String({ description: 'user, say, status or notice' }),
      text: Type.String(),
      intent_id: Type.Optional(intentId),
    }),
  ),
});

export const Health = Type.Object({
  status: Type.String({ description: 'ok, or draining' }),
  version: Type.String(),
  walking: Type.Boolean(),
  busy: Type.Boolean(),
  working: Type.Boolean({ description: 'An intent walking or queued, or a wake’s turn running: the router does not stop it as idle' }),
  intents: Type.Integer(),
  broker: Type.Record(Type.String(), Type.Integer(), { description: 'The live-event broker: subscribers, drops, buffer sizes' }),
});

const link = nullable(Type.Object({ url: Type.String({ description: 'Credentials removed' }) }));
export const Me = Type.Object({
  user_id: Type.String(),
  did: did(),
  public_key: Type.String(),
  version: Type.String(),
  models: Type.Object({ compiler: Type.String(), compiler_escalation: Type.String(), planner: Type.String(), executor: Type.String() }),
  services: Type.Object({
    gateway: link,
    memory: link,
    contracts: link,
    scheduler: link,
    settlement: link,
    marketplace: link,
    mcp_servers: Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: true, description: 'Each MCP server and how it is reached' })),
  }),
  settings: Type.Object({
    gate_timeout_seconds: Type.Number(),
    async_strategy: Type.String(),
    max_queued_intents: Type.Integer(),
    compile_confidence: Type.Number(),
    ungated_tools: Type.Array(Type.String()),
  }),
});

export const Tools = Type.Object({
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      server: Type.String(),
      description: Type.String(),
      read_only: Type.Boolean({ description: 'Runs without asking when true' }),
      input_schema: openObject('The tool’s JSON Schema'),
    }),
  ),
  unavailable: Type.Array(Type.Object({ server: Type.String(), error: Type.String() })),
});

export const WakeAccepted = Type.Object({
  accepted: Type.Boolean(),
  duplicate: Type.Boolean({ description: 'This Idempotency-Key was taken before' }),
  conversation_id: Type.String(),
});

export const Draining = Type.Object({ draining: Type.Literal(true), walking: nullable(intentId) });

/*
 * The console's reads, passed through from the service that answers them (settlement, the scheduler, the gateway, the
 * memory server): the members the console relies on are listed, and `additionalProperties` keeps whatever else the
 * service adds, so a newer service's answer is not cut down by an older daemon.
 */
const passedThrough = <T extends Parameters<typeof Type.Object>[0]>(members: T, description: string) =>
  Type.Object(members, { additionalProperties: true, description });

export const Account = passedThrough(
  {
    did: did(),
    balance: Type.String({ description: 'Spendable now, a decimal string' }),
    held: Type.String({ description: 'Locked in open holds' }),
    payout_address: nullable(Type.String()),
  },
  'Settlement’s account view',
);

export const Hold = passedThrough(
  {
    id: uuid(),
    payer: did(),
    payee: did(),
    amount: Type.String({ description: 'Locked, a decimal string' }),
    status: Type.String({ description: 'open (the list shows open holds only)' }),
    expires_at: isoTime(),
    created_at: isoTime(),
  },
  'Settlement’s hold view',
);
export const Holds = Type.Object({ holds: Type.Array(Hold), next_before: nullable(Type.Integer({ description: '`before` for the next page' })) });

export const Alarm = passedThrough(
  { id: uuid(), status: Type.String({ description: 'active, fired, cancelled or failed' }), next_fire_at: isoTime() },
  'The scheduler’s alarm view',
);
export const Alarms = Type.Object({ alarms: Type.Array(Alarm), count: Type.Integer() });

export const Spend = passedThrough(
  {
    actor: Type.String(),
    days: Type.Array(openObject('day, spent_credit, limit_credit, calls')),
    intents: Type.Array(openObject('intent_id, calls, input_tokens, output_tokens, cost_credit')),
  },
  'The gateway’s usage answer',
);

export const Memories = passedThrough(
  { memories: Type.Array(passedThrough({ id: uuid(), content: nullable(Type.String()) }, 'A memory')), next_cursor: nullable(Type.String()) },
  'The memory server’s search answer',
);

export const Forgotten = passedThrough(
  { id: uuid(), status: Type.String({ description: 'forgotten or erased' }), changed: Type.Boolean() },
  'The forget answer',
);

export const Invocation = passedThrough(
  {
    invocation_id: uuid(),
    service_id: uuid(),
    operation: Type.String(),
    status: Type.String({ description: 'pending, succeeded, failed, ...' }),
    cost: Type.String({ description: 'What it cost, a decimal string' }),
    started_at: isoTime(),
    finished_at: nullable(isoTime()),
  },
  'The marketplace’s invocation view',
);

export const Invocations = passedThrough(
  {
    total: Type.String({ description: 'Spent on the marketplace in all' }),
    by_service: Type.Array(openObject('service_id, calls, spent')),
    items: Type.Array(Invocation, { description: 'Newest first' }),
    next_cursor: nullable(Type.String()),
  },
  'The marketplace’s spend answer for this agent',
);

export const MarketReceipt = passedThrough(
  {
    invocation_id: uuid(),
    final: Type.Boolean({ description: 'True once the money moved at settlement' }),
    signer: Type.String({ description: 'The EVM address the receipt says signed it (the page checks it against the published one)' }),
    domain: openObject('The EIP-712 domain'),
    primary_type: Type.String(),
    types: openObject('The EIP-712 types'),
    message: Type.Record(Type.String(), Type.String(), { description: 'The EIP-712 message, integers as decimal strings' }),
    digest: Type.String(),
    signature: Type.String(),
    attestation: openObject('settlement_seq, settlement_receipt, payment_id'),
  },
  'The marketplace’s EIP-712 receipt, as signed',
);
