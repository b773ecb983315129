import type { CompiledIntent, IntentState, StepView } from '../intents/intent-state.ts';
import type { ChatMessage } from '../llm/model-client.ts';
import type { ToolInfo } from '../tools/tool-types.ts';

/** The words the rail sends to models. Kept in one place so they can be read, tuned and tested together. */

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

function json(value: unknown, limit: number): string {
  return cut(JSON.stringify(value) ?? 'null', limit);
}

export function compileMessages(prose: string, now: Date): ChatMessage[] {
  return [
    {
      role: 'system',
      content: [
        'You turn a request from the user into a structured intent for the personal agent that acts for them.',
        'Answer with one JSON object matching the schema, nothing else.',
        'outcome: "act" when the request is clear enough to act on; "clarify" when something essential is missing, and then put one short question for the user in `question`.',
        'goal: what the user wants done, in one sentence. constraints: limits the user set (amounts, times, people). success_criteria: how to tell it is done.',
        'confidence: from 0 to 1, how sure you are that you understood the request.',
        `The time now is ${now.toISOString()}.`,
      ].join('\n'),
    },
    { role: 'user', content: prose },
  ];
}

/** The tool list as the planner reads it. */
export function toolCatalogueText(tools: readonly ToolInfo[], gated: (tool: ToolInfo) => boolean): string {
  if (tools.length === 0) return '(no tools are available: plan model steps only)';
  return tools
    .map(
      (tool) =>
        `- ${tool.name}${gated(tool) ? ' [asks the user for approval first]' : ''}: ${cut(tool.description, 400)}\n  arguments schema: ${json(tool.inputSchema, 1_500)}`,
    )
    .join('\n');
}

export function planMessages(intent: CompiledIntent, prose: string, toolText: string, problems: readonly string[] | undefined): ChatMessage[] {
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: [
        'You plan how the personal agent carries out an intent: a small graph of steps, at most 20, each one of:',
        '- kind "tool": call `tool` (a name from the list below, exactly) with `arguments_json`, a JSON object as text matching the tool’s arguments schema. An argument may be {"$ref": "<step id>"} or {"$ref": "<step id>.<field>.<field>"} to use the result of an earlier step, which must then be in depends_on.',
        '- kind "model": ask the executor model `prompt`; it sees the results of the steps in depends_on.',
        '- kind "gate": ask the user `question` with `options` before the steps that depend on it. Approvals for money, deploys and other writes are added by the agent itself: do not add gates for those.',
        'Step ids are short: lowercase letters, digits, _ and -. depends_on lists the ids a step needs. Unused fields are null (options and depends_on are []).',
        'The agent writes the final answer itself after the last step: do not add a step for it.',
        'Tools:',
        toolText,
      ].join('\n'),
    },
    {
      role: 'user',
      content: `Intent: ${intent.goal}\nConstraints: ${intent.constraints.join('; ') || 'none'}\nDone when: ${intent.success_criteria.join('; ') || 'the goal is met'}\nThe user said: ${cut(prose, 4_000)}`,
    },
  ];
  if (problems && problems.length > 0)
    messages.push({ role: 'user', content: `Your previous plan was refused: ${problems.slice(0, 20).join('; ')}. Make a new plan that fixes every problem.` });
  return messages;
}

/** What a step produced, as the executor reads it. */
function stepLine(step: StepView): string {
  const what = step.kind === 'tool' ? `${step.tool}` : step.kind;
  const outcome =
    step.status === 'done'
      ? `result: ${json(step.result, 4_000)}`
      : step.status === 'denied'
        ? 'the user did not approve it'
        : step.status === 'skipped'
          ? `skipped (${step.reason ?? 'not run'})`
          : step.status === 'failed'
            ? `failed: ${step.error ?? ''}`
            : step.status;
  return `- ${step.id} "${step.title}" (${what}): ${outcome}`;
}

export function modelStepMessages(step: StepView, intent: IntentState, dependencies: readonly StepView[]): ChatMessage[] {
  return [
    {
      role: 'system',
      content: `You are the executor of a personal agent, doing one step of the intent "${intent.compiled?.goal ?? intent.prose}". Answer the step directly and concisely.`,
    },
    {
      role: 'user',
      content: `${step.prompt ?? step.title}${dependencies.length > 0 ? `\n\nResults of earlier steps:\n${dependencies.map(stepLine).join('\n')}` : ''}`,
    },
  ];
}

export function answerMessages(intent: IntentState): ChatMessage[] {
  const steps = intent.steps.filter((step) => !step.guards);
  return [
    {
      role: 'system',
      content:
        'You are the executor of a personal agent. Write the answer to the user from what the steps did: say what was done, give the results they asked for, and say plainly what was not done and why (a step the user did not approve, a step skipped). Do not invent results.',
    },
    {
      role: 'user',
      content: `The user asked: ${cut(intent.prose, 4_000)}\nIntent: ${intent.compiled?.goal ?? ''}\nDone when: ${(intent.compiled?.success_criteria ?? []).join('; ')}\nSteps:\n${steps.map(stepLine).join('\n') || '(none)'}`,
    },
  ];
}

export function chatMessages(options: {
  memories: readonly string[];
  history: readonly { role: 'user' | 'assistant'; text: string }[];
  message: string;
  toolNames: readonly string[];
  now: Date;
  wake?: string;
}): ChatMessage[] {
  const system = [
    'You are the user’s personal agent, talking with them. Answer with one JSON object matching the schema.',
    'reply: what you say to the user.',
    `task: when the user asks you to do something that needs actions (${options.toolNames.length > 0 ? `you can use: ${options.toolNames.slice(0, 40).join(', ')}` : 'you have no tools right now'}), a self-contained description of it for your planner; null for conversation and questions you can answer yourself. When you set a task, the reply says you are on it.`,
    'remember: durable facts about the user worth keeping for later (preferences, people, plans), each one self-contained sentence; [] when there is nothing new.',
    `The time now is ${options.now.toISOString()}.`,
  ];
  if (options.memories.length > 0) system.push(`What you remember about the user:\n${options.memories.map((memory) => `- ${cut(memory, 500)}`).join('\n')}`);
  const messages: ChatMessage[] = [{ role: 'system', content: system.join('\n') }];
  for (const turn of options.history) messages.push({ role: turn.role, content: turn.text });
  messages.push({ role: 'user', content: options.wake ? `[An alarm you set went off] ${options.wake}` : options.message });
  return messages;
}
