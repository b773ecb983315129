import type { FastifyRequest } from 'fastify';

type RouteOptions = FastifyRequest['routeOptions'];

declare module 'fastify' {
  interface FastifyRequest {
    /** `routeOptions` as first read for this request (`routeOf`); undefined until then. */
    routeOptionsRead: RouteOptions | undefined;
  }
}

/**
 * The request's route options (its template `url`, `config`, `schema`, …), built once a request. Fastify's
 * `request.routeOptions` is a getter that builds a new object of a dozen fields on every read, and the kit's hooks
 * read it several times a request (the bearer's public paths, the principal's prefixes, the body checks, metrics and
 * tracing): on a service with hundreds of requests in flight, every object a request makes is garbage each young
 * collection has to step over while it copies what is still live. `createServiceApp` declares the field.
 *
 * @example if (publicPaths.has(routeOf(request).url ?? '')) return;
 */
export function routeOf(request: FastifyRequest): RouteOptions {
  let read = request.routeOptionsRead;
  if (read === undefined) {
    read = request.routeOptions;
    request.routeOptionsRead = read;
  }
  return read;
}
