import type { Usage } from '../metering/meter.ts';

const maxTokens = 2 ** 31 - 1;

function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= maxTokens ? value : undefined;
}

/**
 * The usage an OpenAI-compatible answer reports: `usage.prompt_tokens` and `usage.completion_tokens` (absent for
 * embeddings, which are input only). Undefined when missing or malformed: the gateway never guesses a count.
 */
export function usageOf(answer: unknown): Usage | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const usage = (answer as { usage?: unknown }).usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const record = usage as Record<string, unknown>;
  const inputTokens = tokenCount(record.prompt_tokens);
  const outputTokens = record.completion_tokens === undefined ? 0 : tokenCount(record.completion_tokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  return { inputTokens, outputTokens };
}

/** Usage from a non-streaming JSON body. */
export function usageOfBody(body: Buffer): Usage | undefined {
  try {
    return usageOf(JSON.parse(body.toString('utf8')));
  } catch {
    return undefined;
  }
}
