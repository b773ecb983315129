import { inSpan } from '@platform/kit/observability/tracing';
import { isTerminal } from '../intents/intent-state.ts';
import { ModelCallError } from '../llm/model-client.ts';
import { compileStage } from './compile-stage.ts';
import { planStage } from './plan-stage.ts';
import type { RailContext, RunSignals } from './rail-context.ts';
import { walkStage } from './walk-stage.ts';

/** Why a run was cancelled, recorded in the intent's `intent.cancel`. */
export interface CancelReason {
  reason: string;
  by: 'user' | 'interrupt' | 'restart';
}

/**
 * Runs one intent through the rail from wherever its journal says it is: compile (drafting), plan (planning), walk
 * (executing), until it ends or the run is stopped. A cancelled run ends the intent `cancelled`; a drained run
 * (shutdown) leaves it as it is, to resume at the next start. Returns whether the intent ended.
 */
export async function runIntent(context: RailContext, id: string, signals: RunSignals, cancelReason: () => CancelReason): Promise<'ended' | 'stopped'> {
  for (;;) {
    const state = context.book.state(id);
    if (state === undefined || isTerminal(state.status)) return 'ended';
    if (signals.cancel.aborted) {
      await context.book.append(id, 'intent.cancel', { ...cancelReason() });
      return 'ended';
    }
    if (signals.drain.aborted) return 'stopped';
    try {
      // A span per stage of the rail (compile, plan, walk), under the intent's; a walk's steps have their own below it.
      if (state.status === 'drafting') await inSpan('rail compile', stageAttributes('compile'), () => compileStage(context, state, signals));
      else if (state.status === 'planning') await inSpan('rail plan', stageAttributes('plan'), () => planStage(context, state, signals));
      else await inSpan('rail walk', stageAttributes('walk'), () => walkStage(context, state, signals));
    } catch (error) {
      // A cancel abandons the model call in flight; the loop records the cancel.
      if (signals.cancel.aborted) continue;
      if (error instanceof ModelCallError) {
        await context.book.append(id, 'intent.fail', { reason: 'model_error', message: error.message, code: error.code });
        continue;
      }
      context.logger.error({ err: error, intent: id }, 'intent run failed');
      await context.book.append(id, 'intent.fail', { reason: 'internal', message: 'internal error' });
    }
  }
}

function stageAttributes(stage: 'compile' | 'plan' | 'walk') {
  return { attributes: { 'platform.rail.stage': stage } };
}
