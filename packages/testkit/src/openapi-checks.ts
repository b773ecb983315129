import assert from 'node:assert/strict';
import { describesOutcome, type OpenApiDocument, openApiMethods, openApiPath, registeredRoutes } from '@platform/kit/http/openapi';

type App = Parameters<typeof registeredRoutes>[0];

/**
 * Checks a built (ready) app's API description: `/openapi.json` answers without any credential, is OpenAPI 3.1 in
 * shape, and lists every route the app registered with its method (those OpenAPI 3.1 can name), request parts and
 * declared responses, and every route declares what it answers (kit `describesOutcome`); `/docs` is an HTML page.
 * A route marked `schema.hide` (the kit's `GET /metrics`) is not part of the API and not looked for.
 * Returns the document for checks of the service's own.
 *
 * @example const document = await assertDescribesEveryRoute(app, { title: 'scheduler' })
 */
export async function assertDescribesEveryRoute(app: App, expected: { title: string }): Promise<OpenApiDocument> {
  const answer = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(answer.statusCode, 200, answer.body);
  const document = answer.json() as OpenApiDocument;
  assert.equal(document.openapi, '3.1.0');
  assert.equal(document.info.title, expected.title);
  assert.match(document.info.version, /^\d+\.\d+\.\d+/);
  assert.equal(typeof document.paths, 'object');
  const withoutSuccess: string[] = [];
  for (const route of registeredRoutes(app)) {
    // Left out of the description on purpose (`schema.hide`): the operations endpoint `GET /metrics`, not the API.
    if ((route.schema as { hide?: boolean } | undefined)?.hide === true) continue;
    for (const method of [route.method].flat().filter((method) => openApiMethods.has(method.toLowerCase()))) {
      const operation = document.paths[openApiPath(route.url)]?.[method.toLowerCase()];
      const name = `${method} ${route.url}`;
      assert.ok(operation, `${name} is missing from /openapi.json`);
      const schema = route.schema ?? {};
      if (schema.body) assert.ok(operation.requestBody, `${name}: no request body`);
      for (const part of ['querystring', 'params', 'headers'] as const) {
        const fields = Object.keys((schema[part] as { properties?: object } | undefined)?.properties ?? {});
        if (fields.length > 0) assert.ok(operation.parameters?.length, `${name}: no parameters for its ${part} schema`);
      }
      const declared = Object.keys((schema.response ?? {}) as object);
      for (const status of declared) assert.ok(operation.responses[status.replace('xx', 'XX')], `${name}: no ${status} response`);
      const described = describesOutcome(declared);
      assert.equal(operation['x-response-schema'], described ? undefined : 'missing', `${name}: marked wrongly`);
      if (!described) withoutSuccess.push(name);
    }
  }
  // Every route says what it answers: the document is the callers' contract, and the schema is the serialiser too, so a
  // route without one sends whatever its handler returns. (A route that only refuses declares its 405 or 501.)
  assert.deepEqual(withoutSuccess, [], `routes that declare no success response: ${withoutSuccess.join(', ')}`);
  const page = await app.inject({ method: 'GET', url: '/docs' });
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.match(String(page.headers['content-security-policy']), /^default-src 'none'/);
  return document;
}

/** The routes of a document that declare no response schema, as `METHOD /path`, for the README's list. */
export function routesWithoutResponseSchema(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => operation['x-response-schema'] === 'missing')
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
}
