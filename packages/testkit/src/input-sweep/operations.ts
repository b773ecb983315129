import type { OpenApiDocument } from '@platform/kit/http/openapi';

/** A JSON Schema as the API description carries it (inlined: the kit's documents use no `$ref`). */
export type JsonSchema = Record<string, unknown>;

export interface SweepParameter {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

/** One operation of a service's document, in the form the sweep builds requests from. */
export interface SweepOperation {
  /** `POST /v1/alarms/{id}` */
  id: string;
  method: string;
  /** The document's path, with `{name}` placeholders. */
  path: string;
  pathParameters: SweepParameter[];
  query: SweepParameter[];
  headers: SweepParameter[];
  /** The declared request body: its content type and, for JSON, its schema. */
  body: { contentType: string; schema: JsonSchema | undefined; required: boolean } | undefined;
  /** The alternatives of the security requirement, each a list of scheme names; empty when the route is public. */
  security: string[][];
  /** Declared answers by status (`200`, `4XX`, `default`): content type to schema. */
  responses: Record<string, Record<string, JsonSchema | undefined>>;
}

interface DocumentParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

interface DocumentOperation {
  parameters?: DocumentParameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: JsonSchema }> };
  security?: Array<Record<string, string[]>>;
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

/** Every operation the document describes, in its order. */
export function operationsOf(document: OpenApiDocument): SweepOperation[] {
  const operations: SweepOperation[] = [];
  for (const [path, methods] of Object.entries(document.paths))
    for (const [method, described] of Object.entries(methods as Record<string, DocumentOperation>)) {
      const parameters = (described.parameters ?? []).map((parameter) => ({
        in: parameter.in,
        name: parameter.name,
        required: parameter.required ?? parameter.in === 'path',
        schema: parameter.schema ?? {},
      }));
      const content = described.requestBody?.content;
      const contentType = content ? (Object.keys(content).find((type) => type === 'application/json') ?? Object.keys(content)[0]) : undefined;
      const responses = Object.fromEntries(
        Object.entries(described.responses ?? {}).map(([status, answer]) => [
          status,
          Object.fromEntries(Object.entries(answer.content ?? {}).map(([type, entry]) => [type, entry.schema])),
        ]),
      );
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParameters: parameters.filter((parameter) => parameter.in === 'path'),
        query: parameters.filter((parameter) => parameter.in === 'query'),
        headers: parameters.filter((parameter) => parameter.in === 'header'),
        body:
          contentType === undefined ? undefined : { contentType, schema: content?.[contentType]?.schema, required: described.requestBody?.required ?? false },
        security: (described.security ?? []).map((requirement) => Object.keys(requirement)),
        responses,
      });
    }
  return operations;
}

/** The declared answer for `status`: its own entry, its range (`4XX`), or `default`. */
export function declaredAnswer(operation: SweepOperation, status: number): Record<string, JsonSchema | undefined> | undefined {
  return operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses.default;
}
