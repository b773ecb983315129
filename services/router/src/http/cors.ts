import type { IncomingHttpHeaders } from 'node:http';

const allowedHeaders = 'authorization, content-type, last-event-id, idempotency-key, x-platform-byo-api-key, x-platform-user-api-key';

/**
 * CORS as ROUTER_CORS_ORIGINS says: `*` (the default) lets any origin call with its bearer token (credentials travel
 * in Authorization, not cookies); otherwise only the listed origins get the headers. Returns the headers to add, for
 * the router's own answers and for proxied ones alike.
 */
export function corsHeaders(origins: readonly string[], headers: IncomingHttpHeaders, preflight: boolean): Record<string, string> {
  const origin = headers.origin;
  if (typeof origin !== 'string') return {};
  const any = origins.includes('*');
  if (!any && !origins.includes(origin)) return {};
  const result: Record<string, string> = {
    'access-control-allow-origin': any ? '*' : origin,
    'access-control-expose-headers': 'retry-after, x-platform-cold-start-ms',
  };
  if (!any) result.vary = 'Origin';
  if (preflight) {
    result['access-control-allow-methods'] = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
    result['access-control-allow-headers'] = allowedHeaders;
    result['access-control-max-age'] = '600';
  }
  return result;
}
