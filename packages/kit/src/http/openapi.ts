import { fastifySwagger, formatParamUrl } from '@fastify/swagger';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { nonJsonResponse, openObject, validatedByHandler } from '../wire-schemas.ts';
import { renderApiDocsPage } from './api-docs-page.ts';
import type { OpenApiDocument, OpenApiOperation, SecurityScheme } from './openapi-document.ts';

export type { OpenApiDocument, OpenApiOperation, SecurityScheme };

/** The paths of the API description; public on every service, like `/healthz`. */
export const apiDocsPaths = ['/openapi.json', '/docs'] as const;

export interface ApiInfo {
  /** `info.title`: the service's name. */
  title: string;
  /** `info.version`: the service's version. */
  version: string;
}

/** The methods OpenAPI 3.1 can describe; Fastify's `all` adds others (QUERY, PROPFIND, ...) that a 3.1 document cannot hold. */
export const openApiMethods: ReadonlySet<string> = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * Whether a route's declared responses say what it answers: a success or redirect (`200`, `2xx`, `302`), `default` (an
 * answer passed on whatever its status, as the router's wake route does), or, for a route that exists only to refuse,
 * that refusal by its own status: `405` (MCP's GET /mcp on a stateless server) or `501` (a feature the spec names and
 * this build has not). The failure ranges every route gets do not count.
 */
export function describesOutcome(statuses: readonly string[]): boolean {
  return statuses.some((status) => status[0] === '2' || status[0] === '3' || status === 'default' || status === '405' || status === '501');
}

/** What a route's auth hook looks at, to say whether it applies. */
export type RouteShape = Pick<RouteOptions, 'url' | 'method' | 'config' | 'schema'>;

interface RouteSecurity {
  required: string[];
  optional: string[];
  /** Set by `documentSecurityAlternatives`: the requirement's alternatives as they are (an empty one: no credentials). */
  alternatives?: string[][];
}

interface ApiRegistry {
  routes: RouteShape[];
  schemes: Record<string, SecurityScheme>;
  security: WeakMap<object, RouteSecurity>;
}

const registryDecorator = 'platformApiRegistry';

/**
 * Describes every route of the app in `GET /openapi.json` (OpenAPI 3.1, from the route schemas; @fastify/swagger only
 * reads them, so no route gains validation or serialisation) and renders it in `GET /docs` (one self-contained page).
 * Called by `createServiceApp` before any route exists: the plugin is applied directly rather than through `register`,
 * which would defer its `onRoute` hook until `ready()` and so miss the routes a service adds right after creating the app.
 */
export function installApiDocs(app: FastifyInstance, info: ApiInfo): void {
  const registry: ApiRegistry = { routes: [], schemes: {}, security: new WeakMap() };
  app.decorate(registryDecorator, registry);
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') registry.routes.push(route);
  });
  // The components object is read at each generation, so schemes declared by auth hooks after this call still appear.
  const components = { securitySchemes: registry.schemes };
  fastifySwagger(
    app,
    {
      openapi: { openapi: '3.1.0', info: { title: info.title, version: info.version }, components },
      transform: ({ schema, url, route }) => {
        const marks: Record<string, unknown> = {};
        // Fastify sends such an answer as the handler returned it; the document must not pretend to know its shape.
        // Declared failures alone (every route gets its service's envelope) do not say what the route answers.
        if (!describesOutcome(Object.keys(schema?.response ?? {}))) marks['x-response-schema'] = 'missing';
        const security = registry.security.get(route);
        if (security) marks.security = securityRequirements(security);
        return { schema: { ...schema, ...marks }, url };
      },
      transformObject: (documentObject) => {
        const { openapiObject } = documentObject as { openapiObject: { paths?: Record<string, Record<string, unknown>> } };
        for (const operations of Object.values(openapiObject.paths ?? {}))
          for (const method of Object.keys(operations)) if (!openApiMethods.has(method)) delete operations[method];
        return openapiObject;
      },
    },
    (error) => {
      if (error) throw error;
    },
  );
  let page: { html: string; csp: string } | undefined;
  const description = openObject('An OpenAPI 3.1 document');
  app.get(
    '/openapi.json',
    { schema: { description: 'This API described in OpenAPI 3.1, generated from the route schemas.', response: { 200: description } } },
    async () => app.swagger(),
  );
  const docsSchema = { description: 'The OpenAPI description as a self-contained HTML page.', response: { 200: nonJsonResponse('text/html', 'The page') } };
  app.get('/docs', { schema: docsSchema }, async (_request, reply) => {
    page ??= renderApiDocsPage(app.swagger() as OpenApiDocument);
    return reply.header('content-security-policy', page.csp).type('text/html; charset=utf-8').send(page.html);
  });
}

function securityRequirements(security: RouteSecurity): Array<Record<string, string[]>> {
  if (security.alternatives) return security.alternatives.map((schemes) => Object.fromEntries(schemes.map((name) => [name, []])));
  const required = Object.fromEntries(security.required.map((name) => [name, []]));
  if (security.optional.length === 0) return [required];
  return [{ ...required, ...Object.fromEntries(security.optional.map((name) => [name, []])) }, required];
}

/**
 * Records in the API description that the routes of this scope matching `appliesTo` need `scheme`; called by the auth
 * hooks (transport bearer, principal token) next to the check itself, before the routes are added.
 *
 * @example documentSecurity(app, 'transportBearer', { type: 'http', scheme: 'bearer', description: 'the fleet token' }, (route) => route.url !== '/healthz')
 */
export function documentSecurity(
  app: FastifyInstance,
  name: string,
  scheme: SecurityScheme,
  appliesTo: (route: RouteShape) => 'required' | 'optional' | false,
): void {
  if (!app.hasDecorator(registryDecorator)) return;
  const registry = app.getDecorator<ApiRegistry>(registryDecorator);
  registry.schemes[name] = scheme;
  app.addHook('onRoute', (route) => {
    const applies = appliesTo(route);
    if (applies === false) return;
    const security = registry.security.get(route) ?? { required: [], optional: [] };
    security[applies].push(name);
    registry.security.set(route, security);
  });
}

/**
 * Records security that is a choice between sets of schemes, for routes whose credentials are checked by the route
 * itself (the marketplace's developer routes take a developer token or a wallet signature; `/v1/me` a caller or a
 * developer): `alternativesFor` gives the sets (an empty set means the route also answers without credentials), or
 * undefined where it does not apply. Defines `schemes` in the description.
 *
 * @example documentSecurityAlternatives(app, { developerToken, walletSignature }, (route) => (owned(route) ? [['developerToken'], ['walletSignature']] : undefined))
 */
export function documentSecurityAlternatives(
  app: FastifyInstance,
  schemes: Record<string, SecurityScheme>,
  alternativesFor: (route: RouteShape) => string[][] | undefined,
): void {
  if (!app.hasDecorator(registryDecorator)) return;
  const registry = app.getDecorator<ApiRegistry>(registryDecorator);
  Object.assign(registry.schemes, schemes);
  app.addHook('onRoute', (route) => {
    const alternatives = alternativesFor(route);
    if (alternatives === undefined) return;
    const security = registry.security.get(route) ?? { required: [], optional: [] };
    registry.security.set(route, { ...security, alternatives });
  });
}

/** Every route the app registered (HEAD routes Fastify adds for GETs left out), for tests that check the description covers them. */
export function registeredRoutes(app: FastifyInstance): readonly RouteShape[] {
  return app.getDecorator<ApiRegistry>(registryDecorator).routes;
}

/** The OpenAPI path of a Fastify route URL, as the generator writes it: `/v1/alarms/:id` is `/v1/alarms/{id}`. */
export const openApiPath: (url: string) => string = formatParamUrl;

/**
 * Declares a request header that the routes of this scope matching `appliesTo` read in their own code (the contract
 * engine's and the gateway's `X-Platform-Actor-DID`, the marketplace's `X-Caller-DID`), so the API description lists
 * it. It is added to the route's `headers` schema: beside the headers a route validates, or as the route's only one,
 * checked by the route (`validatedByHandler`), whose own refusal (with the spec's code) is the answer. Call it on
 * the scope before its routes are added.
 *
 * @example declareRequestHeader(app, 'x-platform-actor-did', { description: 'The calling agent', maxLength: 256 }, (route) => route.url.startsWith('/v1/'))
 */
export function declareRequestHeader(
  app: FastifyInstance,
  name: string,
  schema: { description: string; required?: boolean; maxLength?: number; pattern?: string },
  appliesTo: (route: RouteShape) => boolean,
): void {
  const { required, ...property } = schema;
  app.addHook('onRoute', (route) => {
    if (!appliesTo(route)) return;
    const existing = route.schema?.headers as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    const headers: { properties?: Record<string, unknown>; required?: string[] } = existing ?? validatedByHandler({ type: 'object', properties: {} });
    route.schema = {
      ...route.schema,
      headers: {
        ...headers,
        properties: { ...headers.properties, [name]: { type: 'string', ...property } },
        ...(required ? { required: [...(headers.required ?? []), name] } : {}),
      },
    };
  });
}
