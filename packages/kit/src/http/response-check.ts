import type { ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { routeOf } from './route-of.ts';
import { compileStrict } from './validation.ts';

let checking = false;

/**
 * From now on, apps built with `createServiceApp` check each JSON answer against the response schema its route
 * declares for that status, and fail the request (500, logged) when it does not match. For tests only: it is also on
 * in any process started with PLATFORM_CHECK_RESPONSES=1, which `npm test` sets and the testkit hands to the platforms
 * and service processes it starts, so answers between real processes are checked too. Fastify's serialiser would
 * otherwise hide a mismatch by dropping undeclared fields or coercing types.
 *
 * @example checkResponsesAgainstSchemas()
 */
export function checkResponsesAgainstSchemas(): void {
  checking = true;
}

/** Installs the check on an app when it is turned on; called by `createServiceApp`. */
export function installResponseCheck(app: FastifyInstance): void {
  if (!checking && process.env.PLATFORM_CHECK_RESPONSES !== '1') return;
  const compiled = new WeakMap<object, ValidateFunction>();
  app.addHook('preSerialization', async (request, reply, payload) => {
    const responses = routeOf(request).schema?.response as Record<string, object> | undefined;
    const status = String(reply.statusCode);
    const schema = jsonSchemaOf(responses?.[status] ?? responses?.[`${status[0]}xx`] ?? responses?.default, reply);
    if (schema === undefined) return payload;
    let validate = compiled.get(schema);
    if (!validate) {
      validate = compileStrict(closeObjects(schema) as object);
      compiled.set(schema, validate);
    }
    // What goes on the wire: dates as their ISO text, undefined members gone.
    const sent = JSON.parse(JSON.stringify(payload));
    if (!validate(sent)) {
      const reason = (validate.errors ?? []).map((error) => `response${error.instancePath} ${error.message}`).join(', ');
      throw new Error(`${request.method} ${routeOf(request).url} answered ${status} outside its response schema: ${reason}`);
    }
    return payload;
  });
}

/** The schema a JSON answer is serialised with: the declaration itself, or its entry for the answer's content type. */
function jsonSchemaOf(declared: object | undefined, reply: FastifyReply): object | undefined {
  const content = (declared as { content?: Record<string, { schema: object }> } | undefined)?.content;
  if (content === undefined) return declared;
  const type = String(reply.getHeader('content-type') ?? 'application/json')
    .split(';')[0]!
    .trim();
  return content[type]?.schema;
}

/**
 * A copy of the schema in which every object that lists its properties and says nothing of others refuses them. The
 * serialiser silently drops a member its schema does not declare; here the answer that carried one fails instead, so a
 * schema is either complete or says `additionalProperties: true` where the answer is open. Members of an `allOf` are
 * left open, since each names only part of the object.
 */
export function closeObjects(schema: unknown, insideAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => closeObjects(item, insideAllOf));
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions')
      copy[key] = Object.fromEntries(Object.entries(value as object).map(([name, member]) => [name, closeObjects(member)]));
    else if (key === 'allOf') copy[key] = (value as unknown[]).map((member) => closeObjects(member, true));
    else if (['items', 'anyOf', 'oneOf', 'additionalProperties', 'prefixItems', 'not'].includes(key)) copy[key] = closeObjects(value);
    else copy[key] = value;
  }
  if ('properties' in copy && copy.additionalProperties === undefined && !insideAllOf) copy.additionalProperties = false;
  return copy;
}
