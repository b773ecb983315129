import type { IntentState } from '../intents/intent-state.ts';
import { askStructured } from '../llm/structured-output.ts';
import { gateFor } from '../tools/gate-policy.ts';
import { planOutput } from './outputs.ts';
import { checkPlan } from './plan-check.ts';
import { planMessages, toolCatalogueText } from './prompts.ts';
import { maxTokens, type RailContext, type RunSignals } from './rail-context.ts';

/** Plans are tried twice: a refused plan is planned once more with its problems, then the intent fails. */
export const planAttempts = 2;

/**
 * planning → executing: the compiled intent to a plan, checked against the tools the daemon has right now. A plan
 * naming an unknown tool, bad arguments, or a broken graph is refused with every problem listed.
 */
export async function planStage(context: RailContext, state: IntentState, signals: RunSignals): Promise<void> {
  if (state.compiled === undefined) throw new Error(`intent ${state.id} is planning without a compiled intent`);
  const { ungated } = context.settings;
  const snapshot = await context.tools.snapshot();
  let toolText = toolCatalogueText([...snapshot.tools.values()], (tool) => gateFor(tool, {}, ungated) !== undefined);
  if (snapshot.unavailable.length > 0)
    toolText += `\n(unreachable right now, so not available: ${snapshot.unavailable.map((entry) => entry.server).join(', ')})`;
  const attempt = state.plan_attempts + 1;
  const { value, model } = await askStructured(
    context.models,
    {
      slot: 'planner',
      model: context.settings.models.planner,
      messages: planMessages(state.compiled, state.prose, toolText, state.plan_problems),
      maxTokens: maxTokens.plan,
      temperature: 0,
      intentId: state.id,
      signal: signals.cancel,
    },
    planOutput,
  );
  const checked = checkPlan(value, snapshot.tools, { intentId: state.id, ungated });
  if (checked.ok) {
    await context.book.append(state.id, 'intent.planned', { attempt, steps: checked.steps, model });
    return;
  }
  if (attempt < planAttempts) {
    await context.book.append(state.id, 'plan.rejected', { attempt, problems: checked.problems, model });
    return;
  }
  const unreachable =
    snapshot.unavailable.length > 0 ? ` (unreachable: ${snapshot.unavailable.map((entry) => `${entry.server}: ${entry.error}`).join('; ')})` : '';
  await context.book.append(state.id, 'intent.fail', {
    reason: 'plan_invalid',
    message: `no valid plan after ${planAttempts} attempts: ${checked.problems.join('; ')}${unreachable}`,
    problems: checked.problems,
  });
}
