import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { handlerValidatedMark } from '../wire-schemas.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as ((ajv: Ajv) => Ajv) & { get(name: 'date-time'): { validate: (text: string) => boolean } };
const rfc3339 = addFormats.get('date-time').validate;

/**
 * RFC 3339's date-time as ajv-formats checks it, within what PostgreSQL's `timestamptz` and JavaScript's `Date` both
 * hold: RFC 3339 allows year 0000, which PostgreSQL refuses ("date/time field value out of range"), so a query bound
 * to it failed as a 500 instead of a 400.
 */
export function isStorableInstant(text: string): boolean {
  return rfc3339(text) && !text.startsWith('0000');
}

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    // Unknown body fields are usually typos ("delayseconds"); rejecting them beats silently ignoring them.
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv.addFormat('date-time', { type: 'string', validate: isStorableInstant });
}

// Bodies are JSON and must carry the declared types; querystrings and path params are text by nature, so they are coerced.
const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

const acceptEverything = () => true;

/** Fastify validator compiler: strict for bodies, coercing for querystring, params and headers. */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  if ((schema as Record<string, unknown>)[handlerValidatedMark] === true) return acceptEverything;
  return (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema);
};

/** A compiled check of a value against a schema, with the body validator's settings (the tests' response check uses it). */
export const compileStrict = (schema: object): ValidateFunction => strictAjv.compile(schema);
