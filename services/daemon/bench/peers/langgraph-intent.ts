import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { railBody } from '../model-calls.ts';
import { DurableFileSaver } from './durable-file-saver.ts';

/*
 * The peer: the benchmark's two-step intent with a gate, as a LangGraph graph (compile → plan → draft → approval
 * interrupt → finish → answer), each model node calling the same instant model server as the daemon does, and every
 * checkpoint made durable on the same disk. One run = invoke until the interrupt, then resume with the approval.
 */

const State = Annotation.Root({
  prose: Annotation<string>,
  intent: Annotation<unknown>,
  steps: Annotation<unknown>,
  drafted: Annotation<string>,
  approved: Annotation<boolean>,
  finished: Annotation<string>,
  reply: Annotation<string>,
});

export function langGraphIntent(call: (body: Record<string, unknown>) => Promise<string>, checkpointFolder: string) {
  const graph = new StateGraph(State)
    .addNode('compile', async (state) => ({ intent: JSON.parse(await call(railBody('compiled_intent', state.prose))) }))
    .addNode('plan', async (state) => ({ steps: JSON.parse(await call(railBody('plan', `${state.prose} ${JSON.stringify(state.intent)}`))) }))
    .addNode('draft', async () => ({ drafted: await call(railBody(undefined, 'Do draft')) }))
    .addNode('approve', () => ({ approved: interrupt({ question: 'Continue?', options: ['yes', 'no'] }) === 'yes' }))
    .addNode('finish', async (state) => ({ finished: state.approved ? await call(railBody(undefined, 'Do finish')) : '' }))
    .addNode('answer', async (state) => ({ reply: await call(railBody(undefined, `${state.drafted} ${state.finished}`)) }))
    .addEdge(START, 'compile')
    .addEdge('compile', 'plan')
    .addEdge('plan', 'draft')
    .addEdge('draft', 'approve')
    .addEdge('approve', 'finish')
    .addEdge('finish', 'answer')
    .addEdge('answer', END)
    .compile({ checkpointer: new DurableFileSaver(checkpointFolder) });
  let runs = 0;
  return async (prose: string): Promise<string> => {
    const config = { configurable: { thread_id: `intent-${++runs}` } };
    const paused = await graph.invoke({ prose }, config);
    if (!('__interrupt__' in paused)) throw new Error('the graph did not stop at its gate');
    const done = await graph.invoke(new Command({ resume: 'yes' }), config);
    return done.reply;
  };
}
