import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    // Unknown body fields are usually typos ("delayseconds"); rejecting them beats silently ignoring them.
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  return addFormats(ajv);
}

// Bodies are JSON and must carry the declared types; querystrings and path params are text by nature, so they are coerced.
const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

/** Fastify validator compiler: strict for bodies, coercing for querystring, params and headers. */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema);

/** A compiled check of a value against a schema, with the body validator's settings (the tests' response check uses it). */
export const compileStrict = (schema: object): ValidateFunction => strictAjv.compile(schema);
