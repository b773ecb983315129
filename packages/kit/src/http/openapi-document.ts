/**
 * An OpenAPI security scheme: a bearer in `Authorization` (or another HTTP scheme there: the marketplace's `Wallet`), or
 * a token in a header of its own.
 */
export type SecurityScheme = { type: 'http'; scheme: string; description: string } | { type: 'apiKey'; in: 'header'; name: string; description: string };

/** The parts of an OpenAPI 3.1 document the docs page and the tests read. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, SecurityScheme> };
}

export interface OpenApiOperation {
  description?: string;
  summary?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: unknown }>;
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema?: unknown }> }>;
  security?: Array<Record<string, string[]>>;
  'x-response-schema'?: 'missing';
}
