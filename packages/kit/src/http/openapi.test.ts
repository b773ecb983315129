import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { Type } from 'typebox';
import { okSchema } from '../envelope.ts';
import { createServiceApp } from './create-app.ts';
import { type OpenApiDocument, registeredRoutes } from './openapi.ts';
import { requirePrincipal } from './principal.ts';
import { requireTransportBearer } from './transport-bearer.ts';

const Note = Type.Object({ id: Type.String({ format: 'uuid' }), text: Type.String({ description: 'What the note says.' }) });

function buildNotesApp() {
  const app = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: 'notes', version: '1.2.3' } });
  requireTransportBearer(app, { token: 'fleet', publicPaths: ['/healthz'] });
  requirePrincipal(app, { header: 'X-Notes-Agent', tokenKey: Buffer.alloc(32), clock: { now: () => new Date() } as never, prefixes: ['/v1/notes'] });
  app.get('/healthz', async () => ({ ok: true }));
  app.post('/v1/notes', {
    schema: {
      description: 'Write a note.',
      headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
      body: Type.Object({ text: Type.String() }, { additionalProperties: false }),
      response: { 201: okSchema(Note) },
    },
    handler: async (request, reply) => reply.status(201).send({ ok: true as const, data: { id: crypto.randomUUID(), text: request.body.text } }),
  });
  app.get('/v1/notes/:id', {
    schema: { params: Type.Object({ id: Type.String() }), querystring: Type.Object({ fields: Type.Optional(Type.String()) }) },
    // No response schema: the answer goes out as returned, extra fields included.
    handler: async (request) => ({ ok: true, data: { id: request.params.id, extra: '<b>kept</b>' } }),
  });
  // Added inside a plugin, after the app was built: it must be described too.
  app.register(async (scope) => {
    scope.delete('/v1/notes/:id', async () => ({ ok: true }));
  });
  return app;
}

describe('API description', () => {
  const app = buildNotesApp();
  let document: OpenApiDocument;
  before(async () => {
    await app.ready();
    const response = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200, 'public: no bearer sent');
    document = response.json();
  });
  after(() => app.close());

  it('is OpenAPI 3.1 with the service name and version', () => {
    assert.equal(document.openapi, '3.1.0');
    assert.deepEqual(document.info, { title: 'notes', version: '1.2.3' });
  });

  it('lists every registered route with its method', () => {
    const listed = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
    assert.deepEqual(listed.sort(), ['DELETE /v1/notes/{id}', 'GET /docs', 'GET /healthz', 'GET /openapi.json', 'GET /v1/notes/{id}', 'POST /v1/notes']);
    assert.equal(registeredRoutes(app).length, 6);
  });

  it('carries the request parts and the response schemas', () => {
    const write = document.paths['/v1/notes']!.post!;
    assert.equal(write.description, 'Write a note.');
    assert.deepEqual(write.requestBody?.content['application/json']?.schema, {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    });
    assert.deepEqual(
      write.parameters?.map((parameter) => [parameter.in, parameter.name]),
      [['header', 'idempotency-key']],
    );
    const created = write.responses['201']?.content?.['application/json']?.schema as { properties: { data: { properties: object } } };
    assert.deepEqual(Object.keys(created.properties.data.properties), ['id', 'text']);
    assert.equal(write['x-response-schema'], undefined);
    const read = document.paths['/v1/notes/{id}']!.get!;
    assert.deepEqual(read.parameters?.map((parameter) => [parameter.in, parameter.name]).sort(), [
      ['path', 'id'],
      ['query', 'fields'],
    ]);
  });

  it('says which routes declare no response schema, and leaves their answers alone', async () => {
    assert.equal(document.paths['/v1/notes/{id}']!.get!['x-response-schema'], 'missing');
    assert.equal(document.paths['/healthz']!.get!['x-response-schema'], 'missing');
    const read = await app.inject({ method: 'GET', url: '/v1/notes/n1', headers: { authorization: 'Bearer fleet', 'x-notes-agent': 'x' } });
    assert.equal(read.statusCode, 401, 'the principal check still runs');
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    assert.deepEqual(health.json(), { ok: true });
  });

  it('names the credentials each route needs', () => {
    assert.deepEqual(Object.keys(document.components?.securitySchemes ?? {}).sort(), ['principalToken', 'transportBearer']);
    assert.deepEqual(document.paths['/v1/notes']!.post!.security, [{ transportBearer: [], principalToken: [] }]);
    assert.equal(document.paths['/healthz']!.get!.security, undefined);
    assert.equal(document.paths['/openapi.json']!.get!.security, undefined);
  });

  it('renders a self-contained page with every operation, behind a strict CSP', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    const csp = String(response.headers['content-security-policy']);
    assert.match(csp, /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    const html = response.body;
    for (const text of ['notes 1.2.3', '/v1/notes/{id}', 'Write a note.', 'What the note says.', 'idempotency-key', 'No response schema is declared'])
      assert.ok(html.includes(text), text);
    // Nothing to fetch: no script, no stylesheet link, no remote URL.
    assert.doesNotMatch(html, /<script|<link|https?:\/\//);
  });

  it('escapes what it shows', async () => {
    const hostile = createServiceApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024, api: { title: '<script>x</script>', version: '1' } });
    hostile.get('/x', { schema: { description: '"><img src=x>' } }, async () => ({}));
    const html = (await hostile.inject({ method: 'GET', url: '/docs' })).body;
    assert.doesNotMatch(html, /<script>x|<img/);
    await hostile.close();
  });
});
