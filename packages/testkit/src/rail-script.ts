import type { ModelRequest, ModelScript } from './scripted-model.ts';

/**
 * Scripts for the daemon's rail, in the wire shapes its structured outputs take (`compiled_intent`, `plan`,
 * `chat_turn`), for the scripted model server: the daemon's tests, the delegation client's, the CLI's and the bench
 * all drive the rail with them.
 */

/** A compile answer: act on `goal`. */
export function compiled(goal: string, confidence = 0.9) {
  return { outcome: 'act', goal, constraints: [], success_criteria: [`${goal} is done`], confidence, question: null };
}

/** A compile answer that ends the intent asking `question`. */
export function clarification(question: string) {
  return { outcome: 'clarify', goal: '', constraints: [], success_criteria: [], confidence: 0.9, question };
}

/** One planned step calling a tool (arguments travel as JSON text, unused fields are null). */
export function toolStep(id: string, tool: string, args: Record<string, unknown>, dependsOn: string[] = []) {
  return {
    id,
    kind: 'tool',
    title: `${tool} (${id})`,
    tool,
    arguments_json: JSON.stringify(args),
    prompt: null,
    question: null,
    options: [],
    depends_on: dependsOn,
  };
}

export function modelStep(id: string, prompt: string, dependsOn: string[] = []) {
  return { id, kind: 'model', title: `think (${id})`, tool: null, arguments_json: null, prompt, question: null, options: [], depends_on: dependsOn };
}

export function gateStep(id: string, question: string, options: string[], dependsOn: string[] = []) {
  return { id, kind: 'gate', title: `ask (${id})`, tool: null, arguments_json: null, prompt: null, question, options, depends_on: dependsOn };
}

/** A plan asking `question` (with `options`) before one model step. */
export function gatedPlan(question = 'Go ahead?', options = ['yes', 'no']) {
  return { steps: [gateStep('ask', question, options), modelStep('work', 'Do the work', ['ask'])] };
}

/**
 * Answers each stage of the rail from a table: the compile answer, the plans in turn (the last one repeats), the chat
 * turn, and the executor's text for a step (`step answer for: …`) and for the final answer (a text, or one written
 * from the request: the steps' results, a gate's answer among them).
 *
 * @example model.setScript(railScript({ plans: [{ steps: [modelStep('think', 'Think')] }], answer: 'Done.' }))
 */
export function railScript(stages: {
  compile?: unknown;
  plans?: unknown[];
  chat?: (request: ModelRequest) => unknown;
  answer?: string | ((request: ModelRequest) => string);
}): ModelScript {
  let plan = 0;
  return (request) => {
    if (request.schemaName === 'compiled_intent') return (stages.compile ?? compiled('do the thing')) as Record<string, unknown>;
    if (request.schemaName === 'plan') return (stages.plans?.[Math.min(plan++, (stages.plans?.length ?? 1) - 1)] ?? { steps: [] }) as Record<string, unknown>;
    if (request.schemaName === 'chat_turn') return (stages.chat?.(request) ?? { reply: 'Hello!', task: null, remember: [] }) as Record<string, unknown>;
    if (request.system.includes('doing one step')) return `step answer for: ${request.user.split('\n')[0]}`;
    return typeof stages.answer === 'function' ? stages.answer(request) : (stages.answer ?? 'All done.');
  };
}
