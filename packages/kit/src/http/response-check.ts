import type { ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { compileStrict } from './validation.ts';

let checking = false;

/**
 * From now on, apps built with `createServiceApp` check each JSON answer against the response schema its route
 * declares for that status, and fail the request (500, logged) when it does not match. For tests only: the testkit
 * turns it on when PLATFORM_CHECK_RESPONSES=1, which `npm test` sets. Fastify's serialiser would otherwise hide a
 * mismatch by dropping undeclared fields or coercing types.
 *
 * @example checkResponsesAgainstSchemas()
 */
export function checkResponsesAgainstSchemas(): void {
  checking = true;
}

/** Installs the check on an app when it is turned on; called by `createServiceApp`. */
export function installResponseCheck(app: FastifyInstance): void {
  if (!checking) return;
  const compiled = new WeakMap<object, ValidateFunction>();
  app.addHook('preSerialization', async (request, reply, payload) => {
    const responses = request.routeOptions.schema?.response as Record<string, object> | undefined;
    const status = String(reply.statusCode);
    const schema = responses?.[status] ?? responses?.[`${status[0]}xx`] ?? responses?.default;
    if (schema === undefined) return payload;
    let validate = compiled.get(schema);
    if (!validate) {
      validate = compileStrict(schema);
      compiled.set(schema, validate);
    }
    // What goes on the wire: dates as their ISO text, undefined members gone.
    const sent = JSON.parse(JSON.stringify(payload));
    if (!validate(sent)) {
      const reason = (validate.errors ?? []).map((error) => `response${error.instancePath} ${error.message}`).join(', ');
      throw new Error(`${request.method} ${request.routeOptions.url} answered ${status} outside its response schema: ${reason}`);
    }
    return payload;
  });
}
