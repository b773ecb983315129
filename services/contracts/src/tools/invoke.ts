import { failure } from '@platform/kit/envelope';
import { ServiceError } from '@platform/kit/errors';
import { toServiceError } from '@platform/kit/http/error-handler';
import { validatorCompiler } from '@platform/kit/http/validation';
import type { Logger } from 'pino';
import { mcpTools } from './index.ts';
import type { Tool, ToolContext } from './tool.ts';

/** A tool as MCP's tools/list describes it. */
export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Tool['annotations'];
}

/** MCP's tools/call result: the data as JSON text and as structured content, or the error with isError. */
export interface ToolCallResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError: boolean;
}

interface AjvLikeError {
  instancePath?: string;
  message?: string;
  params?: { additionalProperty?: string };
}

type Validate = ((value: unknown) => boolean) & { errors?: AjvLikeError[] | null };

/** ajv's first error in the words the HTTP routes use (`arguments/to must be string`). */
function validationMessage(errors: AjvLikeError[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'arguments are invalid';
  const extra = first.params?.additionalProperty ? ` (${first.params.additionalProperty})` : '';
  return `arguments${first.instancePath ?? ''} ${first.message ?? 'are invalid'}${extra}`;
}

/**
 * Lists and calls the MCP tools of the table for POST /rpc and the stdio server: arguments are checked against
 * the same schema as the HTTP body (strict, no coercion), and failures come back as tool errors (isError) carrying
 * the same code and message the HTTP envelope would.
 */
export class ToolInvoker {
  readonly #tools: Map<string, { tool: Tool; validate: Validate }>;
  readonly #logger: Logger;

  constructor(tools: readonly Tool[], logger: Logger) {
    this.#logger = logger;
    this.#tools = new Map(
      mcpTools(tools).map((tool) => [
        tool.tool as string,
        { tool, validate: validatorCompiler({ schema: tool.input, httpPart: 'body', method: 'POST', url: '' }) as Validate },
      ]),
    );
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  list(): ToolDescriptor[] {
    return [...this.#tools.values()].map(({ tool }) => ({
      name: tool.tool as string,
      title: tool.annotations.title,
      description: tool.description,
      // A plain copy: TypeBox schemas carry symbol keys that are no part of JSON Schema.
      inputSchema: JSON.parse(JSON.stringify(tool.input)) as Record<string, unknown>,
      annotations: tool.annotations,
    }));
  }

  async call(name: string, args: unknown, context: ToolContext): Promise<ToolCallResult> {
    const entry = this.#tools.get(name);
    if (!entry) return errorResult(new ServiceError('not_found', `unknown tool ${name}`));
    const input = args ?? {};
    if (!entry.validate(input)) return errorResult(new ServiceError('invalid_request', validationMessage(entry.validate.errors)));
    try {
      const data = (await entry.tool.run(input as never, context)) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data, isError: false };
    } catch (error) {
      const serviceError = toServiceError(error);
      if (serviceError.status >= 500) this.#logger.error({ err: error, tool: name }, 'tool failed');
      return errorResult(serviceError);
    }
  }
}

/** `structuredContent.error` is the error member of the envelope the HTTP route would send. */
function errorResult(error: ServiceError): ToolCallResult {
  return { content: [{ type: 'text', text: `${error.code}: ${error.message}` }], structuredContent: { error: failure(error).error }, isError: true };
}
