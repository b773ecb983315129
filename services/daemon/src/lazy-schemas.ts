import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance, FastifySchema, FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';

type ValidationCheck = ReturnType<FastifySchemaCompiler<FastifySchema>>;

/** What `compileSchemasOnFirstUse` leaves to do: `compileAll()` compiles what no request has needed yet. */
export interface DeferredSchemas {
  /** Compiles every validator and serialiser not compiled yet (throwing as Fastify's start would); how many it compiled. */
  compileAll(): number;
}

/**
 * Fastify compiles every route's validators (ajv) and response serialisers (fast-json-stringify) when the app
 * starts. For the daemon's routes that is generated code and its compiled functions, about 7 MB resident (measured on
 * the bundle), which an idle daemon, one per user, never uses. These compile each one on its first call instead, with
 * the same compiler the app had: the checks and the bytes written are the same, only later. A schema that cannot
 * compile would then fail its first request rather than the start, so a test calls `compileAll()` on every route.
 * Call it before the routes are added.
 */
export function compileSchemasOnFirstUse(app: FastifyInstance): DeferredSchemas {
  const pending = new Set<() => unknown>();
  function onFirstUse<T>(compile: () => T): () => T {
    let compiled: T | undefined;
    const get = () => {
      if (compiled === undefined) {
        compiled = compile();
        pending.delete(get);
      }
      return compiled;
    };
    pending.add(get);
    return get;
  }

  // The kit's (createServiceApp sets it): strict bodies, coerced query strings and parameters.
  const compileValidator = app.validatorCompiler as FastifySchemaCompiler<FastifySchema> | undefined;
  if (compileValidator === undefined) throw new Error('compileSchemasOnFirstUse needs the app created by createServiceApp');
  app.setValidatorCompiler((route) => {
    const validator = onFirstUse(() => compileValidator(route));
    const check: ValidationCheck = (data: unknown) => {
      const compiled = validator();
      const result = compiled(data);
      // Fastify reads a refusal's reasons off the function it was given, and ajv leaves them on its own.
      check.errors = compiled.errors;
      return result;
    };
    return check;
  });

  // Fastify's own default (the app sets none): fast-json-stringify with no shared schemas.
  const compileSerializer: FastifySerializerCompiler<FastifySchema> =
    app.serializerCompiler ?? (SerializerSelector()() as unknown as FastifySerializerCompiler<FastifySchema>);
  app.setSerializerCompiler((route) => {
    const serializer = onFirstUse(() => compileSerializer(route));
    return (data) => serializer()(data);
  });

  return {
    compileAll() {
      const count = pending.size;
      for (const compile of [...pending]) compile();
      return count;
    },
  };
}
