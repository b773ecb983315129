/**
 * The most a call can cost before it is made, from its request alone (no tokenizer): the reservation. It is an upper
 * bound for text, so settling to the reported usage only ever gives credit back:
 *
 * - input: one token per byte of the whole request body, plus a fixed allowance for the chat template. Byte-level
 *   tokenizers never emit more tokens than bytes of text, and the body's JSON is longer than the text it carries.
 *   Images and audio are not bounded this way; their usage is still settled, even past the reservation.
 * - output: `n` × (max_completion_tokens, else max_tokens, else GATEWAY_DEFAULT_MAX_TOKENS, which is then also
 *   sent upstream as max_tokens so the bound holds).
 */
export interface Projection {
  inputTokens: number;
  outputTokens: number;
  /** Set when the request named no output cap: the gateway adds `max_tokens` with this value upstream. */
  addMaxTokens: number | undefined;
}

/** Covers a chat template's role markers and system preamble, which the body's bytes do not include. */
export const templateAllowanceTokens = 64;

export interface ChatLimits {
  max_tokens?: number | null | undefined;
  max_completion_tokens?: number | null | undefined;
  n?: number | null | undefined;
}

export function projectChat(bodyBytes: number, body: ChatLimits, defaultMaxTokens: number): Projection {
  const named = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  const perChoice = named ?? defaultMaxTokens;
  return {
    inputTokens: bodyBytes + templateAllowanceTokens,
    outputTokens: perChoice * (body.n ?? 1),
    addMaxTokens: named === undefined ? defaultMaxTokens : undefined,
  };
}

/** Embeddings are priced on input only. */
export function projectEmbedding(bodyBytes: number): Projection {
  return { inputTokens: bodyBytes + templateAllowanceTokens, outputTokens: 0, addMaxTokens: undefined };
}
