import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { type UpstreamModelNaming, upstreamModelName } from '../models/model-policy.ts';

const optional = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const tokenCap = Type.Integer({ minimum: 1, maximum: 1_000_000 });
const ModelText = Type.String({ minLength: 1, maxLength: 256, description: 'accounts/<provider>/models/<model>' });

/**
 * The chat-completions body: only the fields the gateway reads are checked; every other field (tools, temperature,
 * response_format, fields not invented yet) goes upstream as sent, so any OpenAI client works unchanged.
 */
export const ChatBody = Type.Object(
  {
    model: ModelText,
    messages: Type.Array(Type.Object({}, { additionalProperties: true }), { minItems: 1, maxItems: 10_000 }),
    stream: optional(Type.Boolean()),
    stream_options: optional(Type.Object({ include_usage: optional(Type.Boolean()) }, { additionalProperties: true })),
    max_tokens: optional(tokenCap),
    max_completion_tokens: optional(tokenCap),
    n: optional(Type.Integer({ minimum: 1, maximum: 16 })),
  },
  { additionalProperties: true },
);
export type ChatBody = Static<typeof ChatBody>;

export const EmbeddingBody = Type.Object(
  { model: ModelText, input: Type.Union([Type.String(), Type.Array(Type.Unknown(), { minItems: 1 })]) },
  { additionalProperties: true },
);
export type EmbeddingBody = Static<typeof EmbeddingBody>;

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/**
 * Keeps each JSON body's bytes beside its parsed value (in this scope only): a body the gateway does not need to
 * change goes upstream byte for byte, and its length bounds the input tokens.
 */
export function keepRawJsonBodies(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) return done(null, undefined);
    rawBodies.set(request, bytes);
    try {
      done(null, JSON.parse(bytes.toString('utf8')));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

export function rawBodyOf(request: FastifyRequest): Buffer {
  return rawBodies.get(request) ?? Buffer.from(JSON.stringify(request.body ?? {}));
}

export interface BodyChanges {
  naming: UpstreamModelNaming;
  /** Ask the upstream for the trailing usage chunk the client did not ask for. */
  addIncludeUsage: boolean;
  addMaxTokens: number | undefined;
}

/** The bytes to send upstream: the client's own when nothing changes, else the body re-serialised with the changes. */
export function upstreamBody(raw: Buffer, body: { model: string; stream_options?: unknown }, changes: BodyChanges): Buffer {
  const model = upstreamModelName(body.model, changes.naming);
  if (model === body.model && !changes.addIncludeUsage && changes.addMaxTokens === undefined) return raw;
  const changed: Record<string, unknown> = { ...body, model };
  if (changes.addIncludeUsage) changed.stream_options = { ...(body.stream_options as object | null | undefined), include_usage: true };
  if (changes.addMaxTokens !== undefined) changed.max_tokens = changes.addMaxTokens;
  return Buffer.from(JSON.stringify(changed));
}
