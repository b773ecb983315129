import type { IntentState } from '../intents/intent-state.ts';
import { askStructured } from '../llm/structured-output.ts';
import { compileOutput } from './outputs.ts';
import { compileMessages } from './prompts.ts';
import { maxTokens, type RailContext, type RunSignals } from './rail-context.ts';

/**
 * drafting → planning: prose to a structured intent, or a clarification question that ends the intent. A compiler
 * answer below the confidence threshold is asked again of the escalation model, whose answer stands.
 */
export async function compileStage(context: RailContext, state: IntentState, signals: RunSignals): Promise<void> {
  const { models: chosen, compileConfidence } = context.settings;
  const messages = compileMessages(state.prose, context.clock.now());
  const ask = (model: string) =>
    askStructured(
      context.models,
      { slot: 'compiler', model, messages, maxTokens: maxTokens.compile, temperature: 0, intentId: state.id, signal: signals.cancel },
      compileOutput,
    );
  let answer = await ask(chosen.compiler);
  let escalated = false;
  if (answer.value.confidence < compileConfidence && chosen.compilerEscalation !== chosen.compiler) {
    context.logger.info({ intent: state.id, confidence: answer.value.confidence }, 'compiler not confident; escalating');
    answer = await ask(chosen.compilerEscalation);
    escalated = true;
  }
  const { value, model } = answer;
  if (value.outcome === 'clarify') {
    const question = (value.question ?? '').trim();
    await context.book.append(state.id, 'intent.fail', {
      reason: 'clarification_needed',
      message: `more detail is needed: ${question}`,
      question,
      model,
      escalated,
    });
    return;
  }
  await context.book.append(state.id, 'intent.compiled', {
    goal: value.goal.trim(),
    constraints: value.constraints,
    success_criteria: value.success_criteria,
    confidence: value.confidence,
    model,
    escalated,
  });
}
