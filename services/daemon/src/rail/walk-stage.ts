import { inSpan } from '@platform/kit/observability/tracing';
import type { IntentState, StepView } from '../intents/intent-state.ts';
import { ModelCallError } from '../llm/model-client.ts';
import type { ToolInfo } from '../tools/tool-types.ts';
import { argumentProblems, dependencyOrder } from './plan-check.ts';
import { answerMessages, modelStepMessages } from './prompts.ts';
import { maxTokens, type RailContext, type RunSignals } from './rail-context.ts';
import { resolveRefs } from './refs.ts';

const settled = new Set(['done', 'failed', 'skipped', 'denied']);

/** Tool calls are not abandoned on cancel or shutdown: the step in flight finishes, the walk stops after it. */
const neverAborted = new AbortController().signal;

function stepOf(state: IntentState, id: string): StepView {
  const step = state.steps.find((candidate) => candidate.id === id);
  if (step === undefined) throw new Error(`intent ${state.id} has no step ${id}`);
  return step;
}

function results(state: IntentState): Map<string, unknown> {
  return new Map(state.steps.filter((step) => step.status === 'done').map((step) => [step.id, step.result]));
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/**
 * executing → completed or failed: runs the plan's steps in dependency order, one at a time, checking for cancel and
 * shutdown between steps. A step whose dependency was not done is skipped (a gate the user denied skips what it
 * guards); a tool that fails fails the intent; at the end the executor model writes the answer.
 */
export async function walkStage(context: RailContext, state: IntentState, signals: RunSignals): Promise<void> {
  const order = dependencyOrder(state.steps) ?? state.steps;
  const tools = (await context.tools.snapshot()).tools;
  for (const { id } of order) {
    if (signals.cancel.aborted || signals.drain.aborted) return;
    const step = stepOf(state, id);
    if (settled.has(step.status)) continue;
    const blocker = step.depends_on.map((dependency) => stepOf(state, dependency)).find((dependency) => dependency.status !== 'done');
    if (blocker !== undefined) {
      const reason = blocker.status === 'denied' ? `"${blocker.title}" was not approved` : `"${blocker.title}" was ${blocker.status}`;
      await context.book.append(state.id, 'step.skipped', { node_id: id, reason });
      continue;
    }
    // A span per step: a gate's covers the wait for the person's answer.
    const stepSpan = {
      attributes: { 'platform.step.id': id, 'platform.step.kind': step.kind, ...(step.tool === undefined ? {} : { 'gen_ai.tool.name': step.tool }) },
    };
    if (step.kind === 'gate') {
      if ((await inSpan('rail step gate', stepSpan, () => gateStep(context, state, step, signals))) === 'stopped') return;
    } else if (step.kind === 'tool') {
      const failure = await inSpan('rail step tool', stepSpan, async (span) => {
        const failed = await toolStep(context, state, step, tools);
        if (failed !== undefined) span.setAttribute('platform.step.failure', failed.slice(0, 500));
        return failed;
      });
      if (failure !== undefined) {
        await context.book.append(state.id, 'intent.fail', { reason: 'step_failed', message: `step "${step.title}" failed: ${failure}`, node_id: id });
        return;
      }
    } else await inSpan('rail step model', stepSpan, () => modelStep(context, state, step, signals));
  }
  if (signals.cancel.aborted || signals.drain.aborted) return;
  const answer = await context.models.complete({
    slot: 'executor',
    model: context.settings.models.executor,
    messages: answerMessages(state),
    maxTokens: maxTokens.answer,
    intentId: state.id,
    kindRoute: 'answer',
    signal: signals.cancel,
  });
  await context.book.append(state.id, 'intent.attest', { answer: answer.content.trim(), model: answer.model });
}

async function gateStep(context: RailContext, state: IntentState, step: StepView, signals: RunSignals): Promise<'decided' | 'stopped'> {
  const invoked = state.gates.some((gate) => gate.node_id === step.id);
  if (!invoked) {
    let question = step.question ?? '';
    if (step.guards !== undefined) {
      // The question shows the arguments as they will be sent, with earlier results filled in.
      const guarded = stepOf(state, step.guards);
      const resolved = resolveRefs(guarded.arguments ?? {}, results(state));
      question = `Approve "${guarded.title}"? It ${step.gate_reason ?? 'acts outside your memory'}. ${guarded.tool} with ${short(resolved.ok ? resolved.value : guarded.arguments)}`;
    }
    const expires = new Date(context.clock.now().getTime() + context.settings.gateTimeoutMs).toISOString();
    await context.book.append(state.id, 'gate.invoked', {
      node_id: step.id,
      question,
      options: step.options ?? [],
      expires_at: expires,
      ...(step.guards === undefined ? {} : { guards: step.guards }),
    });
  }
  const decision = await context.gates.wait(state.id, step.id, AbortSignal.any([signals.cancel, signals.drain]));
  return decision === undefined ? 'stopped' : 'decided';
}

/** Runs one tool step; returns the failure, or undefined when it completed. */
async function toolStep(context: RailContext, state: IntentState, step: StepView, tools: ReadonlyMap<string, ToolInfo>): Promise<string | undefined> {
  const fail = async (error: string) => {
    await context.book.append(state.id, 'step.failed', { node_id: step.id, error });
    return error;
  };
  const tool = step.tool === undefined ? undefined : tools.get(step.tool);
  if (tool === undefined) return fail(`the tool ${step.tool ?? ''} is not available now`);
  const resolved = resolveRefs(step.arguments ?? {}, results(state));
  if (!resolved.ok) return fail(resolved.problem);
  const args = resolved.value as Record<string, unknown>;
  const problems = argumentProblems(tool, args);
  if (problems.length > 0) return fail(problems.join('; '));
  const started = recordStart(context, state, { node_id: step.id, tool: tool.name, arguments: args });
  // A step that could act twice must be on disk as started before it acts (a restart then knows it may have); one
  // that is harmless to repeat goes on while its start is written.
  if (step.rerun_safe !== true) await started;
  const outcome = await context.tools.call(tool, args, {
    intentId: state.id,
    nodeId: step.id,
    conversationId: state.source.conversation_id ?? 'default',
    signal: neverAborted,
    // The journal's word that the user said yes to this very step: what lets a call carry a confirmation.
    approved: state.gates.some((gate) => gate.guards === step.id && gate.status === 'approved'),
  });
  await started;
  if (!outcome.ok) return fail(outcome.error);
  await context.book.append(state.id, 'step.completed', { node_id: step.id, result: outcome.result });
  return undefined;
}

/** Starts the `step.started` append; the caller awaits it (a failure to write is seen there, not as unhandled). */
function recordStart(context: RailContext, state: IntentState, body: Record<string, unknown>): Promise<unknown> {
  const started = context.book.append(state.id, 'step.started', body);
  started.catch(() => undefined);
  return started;
}

async function modelStep(context: RailContext, state: IntentState, step: StepView, signals: RunSignals): Promise<void> {
  // A model step changes nothing outside, so the model is asked while its start is written.
  const started = recordStart(context, state, { node_id: step.id });
  const dependencies = step.depends_on.map((id) => stepOf(state, id));
  try {
    const answer = await context.models.complete({
      slot: 'executor',
      model: context.settings.models.executor,
      messages: modelStepMessages(step, state, dependencies),
      maxTokens: maxTokens.step,
      intentId: state.id,
      kindRoute: 'step',
      signal: signals.cancel,
    });
    await started;
    await context.book.append(state.id, 'step.completed', { node_id: step.id, result: answer.content.trim() });
  } catch (error) {
    await started;
    if (!signals.cancel.aborted)
      await context.book.append(state.id, 'step.failed', { node_id: step.id, error: error instanceof ModelCallError ? error.message : 'internal error' });
    throw error;
  }
}
