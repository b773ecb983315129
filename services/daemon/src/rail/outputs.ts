import type { OutputSpec } from '../llm/structured-output.ts';

/**
 * The structured answers the rail asks models for. The schemas use only what OpenAI-style strict structured output
 * accepts (every field required, nullable via a type list, no free-form objects: tool arguments travel as JSON text);
 * lengths and patterns are checked by the daemon after parsing.
 */

const strings = { type: 'array', items: { type: 'string' } };

export interface CompileOutput {
  outcome: 'act' | 'clarify';
  goal: string;
  constraints: string[];
  success_criteria: string[];
  confidence: number;
  question: string | null;
}

export const compileOutput: OutputSpec<CompileOutput> = {
  name: 'compiled_intent',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['outcome', 'goal', 'constraints', 'success_criteria', 'confidence', 'question'],
    properties: {
      outcome: { type: 'string', enum: ['act', 'clarify'] },
      goal: { type: 'string' },
      constraints: strings,
      success_criteria: strings,
      confidence: { type: 'number', minimum: 0, maximum: 1 },
      question: { type: ['string', 'null'] },
    },
  },
  refine(value) {
    const problems: string[] = [];
    if (value.outcome === 'clarify' && (value.question ?? '').trim() === '') problems.push('outcome "clarify" needs a question');
    if (value.outcome === 'act' && value.goal.trim() === '') problems.push('outcome "act" needs a goal');
    if (value.goal.length > 2_000) problems.push('goal is longer than 2000 characters');
    if (value.constraints.length > 20 || value.success_criteria.length > 20) problems.push('at most 20 constraints and 20 success criteria');
    return problems;
  },
};

export interface PlannedStep {
  id: string;
  kind: 'tool' | 'model' | 'gate';
  title: string;
  tool: string | null;
  arguments_json: string | null;
  prompt: string | null;
  question: string | null;
  options: string[];
  depends_on: string[];
}

export interface PlanOutput {
  steps: PlannedStep[];
}

export const planOutput: OutputSpec<PlanOutput> = {
  name: 'plan',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['steps'],
    properties: {
      steps: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'kind', 'title', 'tool', 'arguments_json', 'prompt', 'question', 'options', 'depends_on'],
          properties: {
            id: { type: 'string' },
            kind: { type: 'string', enum: ['tool', 'model', 'gate'] },
            title: { type: 'string' },
            tool: { type: ['string', 'null'] },
            arguments_json: { type: ['string', 'null'] },
            prompt: { type: ['string', 'null'] },
            question: { type: ['string', 'null'] },
            options: strings,
            depends_on: strings,
          },
        },
      },
    },
  },
};

export interface ChatOutput {
  reply: string;
  task: string | null;
  remember: string[];
}

export const chatOutput: OutputSpec<ChatOutput> = {
  name: 'chat_turn',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['reply', 'task', 'remember'],
    properties: { reply: { type: 'string' }, task: { type: ['string', 'null'] }, remember: strings },
  },
  refine(value) {
    const problems: string[] = [];
    if (value.reply.trim() === '') problems.push('reply is empty');
    if (value.remember.length > 10) problems.push('remember at most 10 facts');
    if (value.task !== null && value.task.length > 8_000) problems.push('task is longer than 8000 characters');
    return problems;
  },
};
