import { fileURLToPath } from 'node:url';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';
import { compiled, gateStep, modelStep, railScript } from '@platform/testkit/rail-script';
import { startScriptedModel } from '@platform/testkit/scripted-model';

/*
 * The benchmark's model: an OpenAI-compatible server that answers every stage of the rail at once, in a process of
 * its own so its work is not billed to the daemon. Prose containing "[gate]" gets the plan with an approval gate
 * between its two steps; any other prose gets the same two steps without it.
 */

const plans = {
  plain: { steps: [modelStep('draft', 'Do draft'), modelStep('finish', 'Do finish', ['draft'])] },
  gated: { steps: [modelStep('draft', 'Do draft'), gateStep('approve', 'Continue?', ['yes', 'no'], ['draft']), modelStep('finish', 'Do finish', ['approve'])] },
};

async function main(): Promise<void> {
  const plain = railScript({
    compile: compiled('write a short note', 0.95),
    plans: [plans.plain],
    chat: () => ({ reply: 'ok', task: null, remember: [] }),
    answer: 'A short note.',
  });
  const gated = railScript({ plans: [plans.gated] });
  const model = await startScriptedModel((request) => (request.schemaName === 'plan' && request.prompt.includes('[gate]') ? gated(request) : plain(request)));
  serveChild({ count: () => model.received.length }, { url: model.url });
}

export type ModelProcess = Child<{ count: () => number }, { url: string }>;

/** The model server in its own process; `info.url` is its OpenAI-compatible base (…/v1). */
export function startModelProcess(): Promise<ModelProcess> {
  return forkChild(fileURLToPath(import.meta.url), null);
}

if (import.meta.main) await main();
