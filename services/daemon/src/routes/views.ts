import type { IntentRunner } from '../intents/intent-runner.ts';
import { type GateView, type IntentState, isTerminal, pendingGates } from '../intents/intent-state.ts';

export interface PendingGate {
  node_id: string;
  question: string;
  options: string[];
  expires_at: string;
  guards?: string;
}

export function pendingView(state: IntentState): PendingGate[] {
  return pendingGates(state).map((gate) => ({
    node_id: gate.node_id,
    question: gate.question,
    options: gate.options,
    expires_at: gate.expires_at,
    ...(gate.guards === undefined ? {} : { guards: gate.guards }),
  }));
}

export function gateView(gate: GateView) {
  return {
    node_id: gate.node_id,
    status: gate.status,
    approved: gate.status === 'approved',
    answer: gate.answer ?? '',
    answered_by: gate.answered_by ?? null,
    answered_at: gate.answered_at ?? null,
  };
}

/**
 * The async status of an intent (GET /messages/async/{id}, and what POST /messages answers): `status`, and `result`
 * with `answer` (empty until completed) plus `error`, `reason` and `clarification` when it did not complete.
 */
export function statusView(state: IntentState, runner: IntentRunner) {
  return {
    intent_id: state.id,
    status: state.status,
    result: { answer: state.result?.answer ?? '', ...(state.result ? withoutAnswer(state.result) : {}) },
    pending_gates: pendingView(state),
    queue_position: runner.queuePosition(state.id) ?? null,
    walking: runner.walking === state.id,
    ended: isTerminal(state.status),
    created_at: state.created_at,
    updated_at: state.updated_at,
  };
}

function withoutAnswer(result: NonNullable<IntentState['result']>) {
  const { answer: _answer, ...rest } = result;
  return rest;
}
