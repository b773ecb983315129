import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

// Every problem at once (a model told all of them fixes them in one go); no coercion: "3" is not a number. Made on
// first use: an idle daemon (the router keeps one per user) does not pay for it.
let ajv: Ajv | undefined;
const checkerAjv = () => {
  ajv ??= new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false, validateFormats: false });
  return ajv;
};

export interface CheckProblem {
  /** JSON pointer of the value at fault (`/steps/0/tool`). */
  path: string;
  message: string;
}

export type Checker = (value: unknown) => CheckProblem[];

function describe(error: ErrorObject): CheckProblem {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return { path: error.instancePath, message: `has an unknown field "${String(params.additionalProperty)}"` };
  if (error.keyword === 'required') return { path: error.instancePath, message: `is missing "${String(params.missingProperty)}"` };
  if (error.keyword === 'enum') return { path: error.instancePath, message: `must be one of ${(params.allowedValues as unknown[]).join(', ')}` };
  return { path: error.instancePath, message: error.message ?? 'is invalid' };
}

/**
 * A checker for a JSON schema (MCP tool inputs, structured model outputs); undefined when the schema itself does not
 * compile (a tool with a schema ajv cannot read is then checked by its server alone).
 *
 * @example const check = compileChecker(schema); const problems = check?.(value) ?? []
 */
export function compileChecker(schema: Record<string, unknown>): Checker | undefined {
  const { $schema: _ignored, ...rest } = schema;
  let validate: ValidateFunction;
  try {
    validate = checkerAjv().compile(rest);
  } catch {
    return undefined;
  }
  return (value) => (validate(value) ? [] : (validate.errors ?? []).map(describe));
}

/** `path message` lines for a person or a model to read. */
export function formatProblems(problems: readonly CheckProblem[], root = ''): string[] {
  return problems.map((problem) => `${root}${problem.path === '' ? '' : problem.path} ${problem.message}`.trim());
}
