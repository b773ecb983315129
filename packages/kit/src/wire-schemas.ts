import { type Static, type TSchema, Type } from 'typebox';
import { didPattern } from './auth/did.ts';

/**
 * The shapes every service puts on the wire, as TypeBox schemas for route `response` declarations: one definition of
 * an instant, a UUID, a DID, an amount, so the API descriptions agree with each other and with the kit that writes
 * them (`Date.toISOString`, `uuidv7`, `didFor`, `formatAmount`).
 *
 * @example Type.Object({ id: uuid(), created_at: isoTime(), from: did(), amount: amount('What was paid') })
 */

/** An instant, ISO 8601 in UTC as `Date.toISOString()` writes it. */
export const isoTime = (description?: string) => Type.String({ format: 'date-time', ...described(description) });

/** A UUID (the platform's ids are UUIDv7, so they sort by creation). */
export const uuid = (description?: string) => Type.String({ format: 'uuid', ...described(description) });

/** An agent DID, `did:platform:<label>:<16 hex of its ed25519 key>`. */
export const did = (description?: string) => Type.String({ pattern: didPattern.source, ...described(description) });

/** An amount of the settlement unit as the kit's `formatAmount` writes it: a decimal string with exactly 6 places. */
export const amount = (description?: string) => Type.String({ pattern: '^[0-9]+\\.[0-9]{6}$', ...described(description) });

/** 32 bytes as 0x and 64 hex digits (a digest, a transaction hash, a reference). */
export const hex32 = (description?: string) => Type.String({ pattern: '^0x[0-9a-fA-F]{64}$', ...described(description) });

/** An EVM address, 0x and 40 hex digits (checksummed or not). */
export const evmAddress = (description?: string) => Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', ...described(description) });

/**
 * The value or JSON null (a member always present, empty until something happens). A string, number, integer or
 * boolean becomes `type: [type, 'null']` rather than an `anyOf`: the same JSON Schema, but the serialiser writes it
 * without trying each branch against a validator first (an `anyOf` of a few nullable members doubled the cost of
 * serialising a marketplace invoke answer).
 */
export function nullable<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && ['string', 'number', 'integer', 'boolean'].includes(type))
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
}

/** A JSON object whose members are not ours to list (a provider's answer, a manifest, a payload): sent as it is. */
export const openObject = (description?: string) => Type.Object({}, { additionalProperties: true, ...described(description) });

/**
 * A response that is not JSON, declared by its content type (`text/html`, `text/event-stream`): the API description
 * says what comes back, and Fastify, which serialises objects only, leaves the text the handler sends alone.
 *
 * @example response: { 200: nonJsonResponse('text/event-stream', 'The events, one SSE message each') }
 */
export function nonJsonResponse(contentType: string, description: string) {
  return { description, content: { [contentType]: { schema: Type.String() } } } as unknown as TSchema;
}

function described(description: string | undefined): { description?: string } {
  return description === undefined ? {} : { description };
}

/**
 * The schema as it is on the wire, typed `unknown` for the handler: for answers built from values the code types as
 * `unknown` (a sequencer's command result, a provider's JSON), so the route needs no cast. The tests' response check
 * still holds the answer to the schema.
 */
export const untyped = <T extends TSchema>(schema: T) => Type.Unsafe<unknown>(schema);

/**
 * One of these words on the wire, typed as a plain `string` for the handler (which often builds it from a column or a
 * literal TypeScript widens): the document lists the values, and the tests' response check holds the answer to them.
 *
 * @example status: oneOf(['open', 'closed'])
 */
export const oneOf = (values: readonly string[], description?: string) => Type.Unsafe<string>({ type: 'string', enum: [...values], ...described(description) });

/**
 * The body of a JSON-RPC 2.0 endpoint (the contract engine's `/rpc`, the memory server's MCP `/mcp`): one message or
 * a batch, any JSON as far as HTTP goes, since a malformed message is answered in JSON-RPC's own error shape by the
 * route (`validatedByHandler`), not refused by Fastify.
 */
export const jsonRpcBody = () =>
  validatedByHandler(
    Type.Unsafe<unknown>({
      description: 'A JSON-RPC 2.0 message ({jsonrpc: "2.0", method, params?, id?}) or a batch of them; a malformed one gets a JSON-RPC error',
    }),
  );

/** The mark of a request part the route checks itself (see `validatedByHandler`); the kit's validator compiler lets it through. */
export const handlerValidatedMark = 'x-validated-by-handler';

/**
 * Declares a request part (a body, the headers) in the route schema, and so in the API description, that the route's
 * own code checks rather than Fastify: JSON-RPC messages answered with JSON-RPC errors, a tool's arguments checked by
 * the tool, headers read on a hot path with the errors the spec names. Declaring it is what lets a caller (and the
 * malformed-input sweep) know the route takes it; the kit refuses a body sent to a route that declares none.
 *
 * @example schema: { body: validatedByHandler(JsonRpcMessage) }
 */
export function validatedByHandler<T extends object>(schema: T): T {
  return { ...schema, [handlerValidatedMark]: true };
}
