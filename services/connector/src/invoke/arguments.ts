import { invalidRequest } from '@platform/kit/errors';
import { validatorCompiler } from '@platform/kit/http/validation';
import type { ToolDefinition } from '../connectors/types.ts';

type Check = ((value: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string; params: Record<string, unknown> }[] | null;
};

// One compiled check per tool, made on first use: the same strict ajv (no coercion) as every request body.
const compiled = new WeakMap<ToolDefinition, Check>();

function checkFor(tool: ToolDefinition): Check {
  let check = compiled.get(tool);
  if (!check) {
    check = validatorCompiler({ schema: tool.arguments, method: 'POST', url: '/v1/invoke', httpPart: 'body' }) as Check;
    compiled.set(tool, check);
  }
  return check;
}

/** Checks `args` against the tool's JSON Schema; a failure is 400 naming the field (`arguments.to[0]`) in message and `field`. */
export function validateArguments(tool: ToolDefinition, args: Record<string, unknown>): void {
  const check = checkFor(tool);
  if (check(args)) return;
  const error = check.errors?.[0];
  const path = (error?.instancePath ?? '').split('/').slice(1);
  const missing = error?.params.missingProperty;
  const extra = error?.params.additionalProperty;
  if (typeof missing === 'string') path.push(missing);
  if (typeof extra === 'string') path.push(extra);
  const field = ['arguments', ...path].map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`)).join('');
  const problem =
    typeof missing === 'string' ? 'is required' : typeof extra === 'string' ? `is not an argument of ${tool.name}` : (error?.message ?? 'is invalid');
  throw invalidRequest(`${field} ${problem}`, { field });
}
