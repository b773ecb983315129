import type { Attributes } from './tracing.ts';

/*
 * OpenTelemetry's GenAI semantic conventions (semantic-conventions 1.45, still incubating), for the spans of model
 * and tool calls: the daemon's and the gateway's. The names are written out here rather than imported, so no
 * service loads the incubating module (about 1 MB of constants) for a dozen of them.
 */

/** `chat` for chat completions, `embeddings`, `execute_tool` for a tool call. */
export type GenAiOperation = 'chat' | 'embeddings' | 'execute_tool';

/**
 * The attributes of a model call as it is asked: the operation, the model (the platform's id,
 * `accounts/<provider>/models/<model>`, whose provider part is `gen_ai.provider.name`), the slot it is metered by,
 * and what was asked of it.
 *
 * @example inSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes: modelCallAttributes({ operation: 'chat', model, slot }) }, ...)
 */
export function modelCallAttributes(call: { operation: GenAiOperation; model: string; slot?: string; maxTokens?: number; temperature?: number }): Attributes {
  const provider = /^accounts\/([^/]+)\/models\//.exec(call.model)?.[1];
  return {
    'gen_ai.operation.name': call.operation,
    'gen_ai.request.model': call.model,
    ...(provider === undefined ? {} : { 'gen_ai.provider.name': provider }),
    ...(call.slot === undefined ? {} : { 'platform.model.slot': call.slot }),
    ...(call.maxTokens === undefined ? {} : { 'gen_ai.request.max_tokens': call.maxTokens }),
    ...(call.temperature === undefined ? {} : { 'gen_ai.request.temperature': call.temperature }),
  };
}

/**
 * What a model call used, as the answer reports it: tokens in and out, the model that answered, and what the gateway
 * charged for it (`platform.cost_credit`, in the gateway's credit, a decimal string).
 */
export function modelUsageAttributes(usage: { inputTokens?: number; outputTokens?: number; responseModel?: string; costCredit?: string }): Attributes {
  return {
    ...(usage.inputTokens === undefined ? {} : { 'gen_ai.usage.input_tokens': usage.inputTokens }),
    ...(usage.outputTokens === undefined ? {} : { 'gen_ai.usage.output_tokens': usage.outputTokens }),
    ...(usage.responseModel === undefined ? {} : { 'gen_ai.response.model': usage.responseModel }),
    ...(usage.costCredit === undefined ? {} : { 'platform.cost_credit': usage.costCredit }),
  };
}

/** The attributes of a tool call: `gen_ai.tool.name` and the server that runs it. */
export function toolCallAttributes(tool: { name: string; server: string }): Attributes {
  return { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool.name, 'platform.tool.server': tool.server };
}
