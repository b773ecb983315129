import type { JournalEnvelope } from '@platform/kit/journal-envelope';
import type { PlanStep } from '../rail/plan-types.ts';

export type IntentStatus = 'drafting' | 'planning' | 'executing' | 'completed' | 'failed' | 'cancelled';
export const terminalStatuses: ReadonlySet<IntentStatus> = new Set(['completed', 'failed', 'cancelled']);

export type StepStatus = 'pending' | 'running' | 'waiting' | 'done' | 'failed' | 'skipped' | 'denied';

export interface StepView extends PlanStep {
  status: StepStatus;
  result?: unknown;
  error?: string;
  reason?: string;
}

export interface GateView {
  node_id: string;
  question: string;
  options: string[];
  guards?: string;
  invoked_at: string;
  expires_at: string;
  status: 'pending' | 'approved' | 'denied';
  answer?: string;
  answered_by?: 'user' | 'timeout' | 'cancel' | 'shutdown';
  answered_at?: string;
}

export interface IntentResult {
  answer?: string;
  error?: string;
  reason?: string;
  clarification?: string;
}

export interface CompiledIntent {
  goal: string;
  constraints: string[];
  success_criteria: string[];
  confidence: number;
  model: string;
  escalated: boolean;
}

export interface IntentSource {
  via: 'messages' | 'async' | 'chat' | 'wake';
  conversation_id?: string;
}

/** An intent as its journal says it is: folded from the envelopes, never stored on its own. */
export interface IntentState {
  id: string;
  /** The first envelope's nonce: a UUIDv7 that orders intents created in the same millisecond. */
  order: string;
  status: IntentStatus;
  prose: string;
  source: IntentSource;
  created_at: string;
  updated_at: string;
  compiled?: CompiledIntent;
  plan_attempts: number;
  /** Why the last plan was refused, for the next attempt. */
  plan_problems?: string[];
  steps: StepView[];
  gates: GateView[];
  result?: IntentResult;
  last_seq: number;
  last_kind: string;
}

const statusOfKind: Readonly<Record<string, IntentStatus>> = {
  'intent.created': 'drafting',
  'intent.compiled': 'planning',
  'plan.rejected': 'planning',
  'intent.planned': 'executing',
  'intent.attest': 'completed',
  'intent.fail': 'failed',
  'intent.cancel': 'cancelled',
};

/** The status a list of envelope kinds ends in (from file names alone, without reading the envelopes). */
export function statusOfKinds(kinds: readonly string[]): IntentStatus {
  let status: IntentStatus = 'drafting';
  for (const kind of kinds) status = statusOfKind[kind] ?? status;
  return status;
}

export function isTerminal(status: IntentStatus): boolean {
  return terminalStatuses.has(status);
}

/** The state after the first envelope. */
export function initialState(id: string, first: JournalEnvelope): IntentState {
  const body = first.body as { prose?: string; source?: IntentSource; nonce?: string };
  return {
    id,
    order: body.nonce ?? '',
    status: 'drafting',
    prose: body.prose ?? '',
    source: body.source ?? { via: 'async' },
    created_at: first.at,
    updated_at: first.at,
    plan_attempts: 0,
    steps: [],
    gates: [],
    last_seq: first.seq,
    last_kind: first.kind,
  };
}

type Body = Record<string, unknown>;

/** Applies one envelope (after the first) to the state, in place. Unknown kinds only move seq and time. */
export function applyEnvelope(state: IntentState, envelope: JournalEnvelope): void {
  state.last_seq = envelope.seq;
  state.last_kind = envelope.kind;
  state.updated_at = envelope.at;
  state.status = statusOfKind[envelope.kind] ?? state.status;
  const body = envelope.body as Body;
  const step = () => state.steps.find((candidate) => candidate.id === body.node_id);
  switch (envelope.kind) {
    case 'intent.compiled':
      state.compiled = body as unknown as CompiledIntent;
      break;
    case 'plan.rejected':
      state.plan_attempts = Number(body.attempt ?? state.plan_attempts + 1);
      state.plan_problems = (body.problems as string[]) ?? [];
      break;
    case 'intent.planned':
      state.plan_attempts = Number(body.attempt ?? state.plan_attempts + 1);
      state.steps = ((body.steps as PlanStep[]) ?? []).map((planned) => ({ ...planned, status: 'pending' }));
      break;
    case 'step.started': {
      const started = step();
      if (started) started.status = 'running';
      if (started && body.arguments !== undefined) started.arguments = body.arguments as Record<string, unknown>;
      break;
    }
    case 'step.completed':
      Object.assign(step() ?? {}, { status: 'done', result: body.result });
      break;
    case 'step.failed':
      Object.assign(step() ?? {}, { status: 'failed', error: body.error });
      break;
    case 'step.skipped':
      Object.assign(step() ?? {}, { status: 'skipped', reason: body.reason });
      break;
    case 'gate.invoked':
      Object.assign(step() ?? {}, { status: 'waiting' });
      state.gates.push({
        node_id: String(body.node_id),
        question: String(body.question),
        options: (body.options as string[]) ?? [],
        ...(typeof body.guards === 'string' ? { guards: body.guards } : {}),
        invoked_at: envelope.at,
        expires_at: String(body.expires_at),
        status: 'pending',
      });
      break;
    case 'gate.answered': {
      const gate = state.gates.find((candidate) => candidate.node_id === body.node_id && candidate.status === 'pending');
      if (gate) {
        gate.status = body.approved === true ? 'approved' : 'denied';
        gate.answer = String(body.answer ?? '');
        gate.answered_by = body.by as GateView['answered_by'];
        gate.answered_at = envelope.at;
      }
      Object.assign(step() ?? {}, {
        status: body.approved === true ? 'done' : 'denied',
        result: { approved: body.approved === true, answer: body.answer ?? '' },
      });
      break;
    }
    case 'intent.attest':
      state.result = { answer: String(body.answer ?? '') };
      break;
    case 'intent.fail':
      state.result = {
        error: String(body.message ?? 'failed'),
        reason: String(body.reason ?? 'failed'),
        ...(typeof body.question === 'string' ? { clarification: body.question } : {}),
      };
      break;
    case 'intent.cancel':
      state.result = { error: 'the intent was cancelled', reason: String(body.reason ?? 'cancelled') };
      for (const gate of state.gates) if (gate.status === 'pending') Object.assign(gate, { status: 'denied', answered_by: 'cancel', answered_at: envelope.at });
      break;
  }
}

/** Folds a whole chain. */
export function foldChain(id: string, envelopes: readonly JournalEnvelope[]): IntentState {
  const [first, ...rest] = envelopes;
  if (first === undefined) throw new Error(`intent ${id} has no envelopes`);
  const state = initialState(id, first);
  for (const envelope of rest) applyEnvelope(state, envelope);
  return state;
}

/** The gates still waiting for an answer. */
export function pendingGates(state: IntentState): GateView[] {
  return state.gates.filter((gate) => gate.status === 'pending');
}
