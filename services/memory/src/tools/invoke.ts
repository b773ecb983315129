import { ServiceError } from '@platform/kit/errors';
import { toServiceError } from '@platform/kit/http/error-handler';
import { validatorCompiler } from '@platform/kit/http/validation';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Logger } from 'pino';
import type { MemoryTool, ToolContext } from './tool.ts';

export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: ServiceError };

/** `/memories/0/content` → `memories[0].content`, the way a caller writes the path. */
function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`), '');
}

function describe(error: ErrorObject): { message: string; field: string } {
  const field = fieldPath(error.instancePath);
  const where = field === '' ? 'arguments' : field;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return { message: `${where} has an unknown field "${String(params.additionalProperty)}"`, field };
  if (error.keyword === 'required') {
    const missing = field === '' ? String(params.missingProperty) : `${field}.${String(params.missingProperty)}`;
    return { message: `${missing} is required`, field: missing };
  }
  if (error.keyword === 'pattern' && field.endsWith('id')) return { message: `${where} is not a memory id`, field };
  if (error.keyword === 'pattern') return { message: `${where} has characters that are not allowed`, field };
  if (error.keyword === 'enum') return { message: `${where} must be one of ${(params.allowedValues as unknown[]).join(', ')}`, field };
  return { message: `${where} ${error.message ?? 'is invalid'}`, field };
}

/**
 * Runs tools by name for both front doors: validates the arguments against the tool's schema (filling defaults),
 * runs it, and turns every failure into a ServiceError whose message is safe to show. Unexpected failures are
 * logged with their cause and shown only as "internal error".
 */
export class ToolInvoker {
  private readonly tools = new Map<string, { tool: MemoryTool; validate: ValidateFunction }>();

  private readonly logger: Logger;

  constructor(tools: readonly MemoryTool[], logger: Logger) {
    this.logger = logger;
    for (const tool of tools) {
      const validate = validatorCompiler({ schema: tool.input, method: 'POST', url: `/v1/${tool.name}`, httpPart: 'body' }) as unknown as ValidateFunction;
      this.tools.set(tool.name, { tool, validate });
    }
  }

  list(): MemoryTool[] {
    return [...this.tools.values()].map((entry) => entry.tool);
  }

  get(name: string): MemoryTool | undefined {
    return this.tools.get(name)?.tool;
  }

  async call(name: string, rawArguments: unknown, context: ToolContext): Promise<ToolOutcome> {
    const entry = this.tools.get(name);
    if (entry === undefined) return { ok: false, error: new ServiceError('not_found', `no tool named ${name}`) };
    // Ajv fills defaults in place, on the body this request parsed (nobody else holds it).
    const args = rawArguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      return { ok: false, error: new ServiceError('invalid_request', 'arguments must be a JSON object') };
    if (!entry.validate(args)) {
      const first = entry.validate.errors?.[0];
      const { message, field } = first ? describe(first) : { message: 'arguments are invalid', field: '' };
      return { ok: false, error: new ServiceError('invalid_request', message, { details: { field } }) };
    }
    try {
      return { ok: true, result: await entry.tool.run(args as Record<string, unknown>, context) };
    } catch (error) {
      // The kit's reading of what was thrown: a database out of reach is 503 unavailable with Retry-After, a
      // ServiceError stays itself, anything else is 500 internal (and logged here, with its tool).
      const refusal = toServiceError(error);
      if (refusal.code === 'internal') this.logger.error({ err: error, tool: name }, 'tool failed');
      return { ok: false, error: refusal };
    }
  }
}
