import type { IntentBook } from './intent-book.ts';
import { isTerminal } from './intent-state.ts';

/**
 * What a start does with the intents the last process left unfinished (documented in the README):
 * - drafting and planning intents are compiled or planned again (model calls change nothing outside);
 * - an executing intent keeps every step its journal shows settled, pending gates stay pending with their original
 *   deadline, and a step that had started but not finished runs again only when that is harmless (a read, a model
 *   step, or a tool keyed by the step's idempotency key); otherwise the step is failed as interrupted and the intent
 *   fails, because whether it acted is unknown and must not be guessed;
 * - each one gets an `intent.resumed` envelope, then joins the queue, oldest first.
 * Returns the ids to resume.
 */
export async function recoverUnfinished(book: IntentBook): Promise<string[]> {
  const resumed: string[] = [];
  for (const state of book.unfinished()) {
    const interrupted = state.steps.filter((step) => step.status === 'running');
    const unsafe = interrupted.find((step) => step.kind === 'tool' && step.rerun_safe !== true);
    await book.append(state.id, 'intent.resumed', {
      status: state.status,
      rerun: interrupted.filter((step) => step !== unsafe).map((step) => step.id),
    });
    if (unsafe !== undefined) {
      await book.append(state.id, 'step.failed', {
        node_id: unsafe.id,
        error: `interrupted by a restart while ${unsafe.tool} was running; whether it acted is unknown, so it was not run again`,
      });
      await book.append(state.id, 'intent.fail', {
        reason: 'interrupted',
        message: `the daemon stopped while "${unsafe.title}" (${unsafe.tool}) was running; check its effect before asking again`,
        node_id: unsafe.id,
      });
    }
    if (!isTerminal(book.state(state.id)?.status ?? 'failed')) resumed.push(state.id);
  }
  return resumed;
}
