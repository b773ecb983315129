import { compileChecker, formatProblems } from './json-check.ts';
import { type ModelCall, ModelCallError, type ModelClient } from './model-client.ts';

/** A structured answer: the schema the model is asked to follow and the checks its answer must pass. */
export interface OutputSpec<T> {
  name: string;
  schema: Record<string, unknown>;
  /** Checks beyond the schema (cross-field rules); returns problems, [] when fine. */
  refine?: (value: T) => string[];
}

/** The JSON inside a model's content: fences and prose around the object are tolerated, nothing else is. */
export function jsonFromContent(content: string): unknown {
  const trimmed = content.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(trimmed);
  const text = fenced ? (fenced[1] as string) : trimmed;
  try {
    return JSON.parse(text);
  } catch {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    if (start < 0 || end <= start) throw new Error('the answer holds no JSON object');
    return JSON.parse(text.slice(start, end + 1));
  }
}

const checkers = new Map<string, ReturnType<typeof compileChecker>>();

function problemsOf<T>(spec: OutputSpec<T>, content: string): { value?: T; problems: string[] } {
  let value: unknown;
  try {
    value = jsonFromContent(content);
  } catch (error) {
    return { problems: [`the answer is not JSON (${(error as Error).message})`] };
  }
  let check = checkers.get(spec.name);
  if (check === undefined) {
    check = compileChecker(spec.schema);
    checkers.set(spec.name, check);
  }
  const problems = formatProblems(check?.(value) ?? [], '$');
  if (problems.length > 0) return { problems };
  const refined = spec.refine?.(value as T) ?? [];
  return refined.length > 0 ? { problems: refined } : { value: value as T, problems: [] };
}

/**
 * Asks for a structured answer and never trusts it: the content is parsed and checked against the schema (and the
 * spec's own rules). A bad answer is shown its problems and asked once more; a second bad answer is an error.
 *
 * @example const { value } = await askStructured(models, { slot: 'compiler', model, messages, maxTokens: 800 }, compileOutput)
 */
export async function askStructured<T>(
  models: ModelClient,
  call: Omit<ModelCall, 'responseSchema'>,
  spec: OutputSpec<T>,
): Promise<{ value: T; model: string }> {
  const first = await models.complete({ ...call, responseSchema: { name: spec.name, schema: spec.schema } });
  const checked = problemsOf(spec, first.content);
  if (checked.value !== undefined) return { value: checked.value, model: first.model };
  const retry = await models.complete({
    ...call,
    responseSchema: { name: spec.name, schema: spec.schema },
    messages: [
      ...call.messages,
      { role: 'assistant', content: first.content.slice(0, 8_000) },
      {
        role: 'user',
        content: `That answer cannot be used: ${checked.problems.slice(0, 10).join('; ')}. Answer again with only the JSON object the schema describes.`,
      },
    ],
  });
  const second = problemsOf(spec, retry.content);
  if (second.value !== undefined) return { value: second.value, model: retry.model };
  throw new ModelCallError(200, 'invalid_output', `the ${call.slot} model gave no usable ${spec.name} twice: ${second.problems.slice(0, 5).join('; ')}`, false);
}
