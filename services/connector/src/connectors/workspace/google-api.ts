import { ServiceError } from '@platform/kit/errors';
import { JsonClientError } from '@platform/kit/http/json-client';
import { CredentialRefused } from '../provider-errors.ts';
import type { ToolContext } from '../types.ts';

type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

/** One call to a Google REST API with the connection's access token; answers the parsed JSON or a ServiceError. */
export async function googleCall(
  context: ToolContext,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  options: { query?: Query; body?: unknown } = {},
): Promise<Record<string, unknown>> {
  // Joined, not resolved: `new URL('/gmail/…', base)` would drop a path prefix the base URL carries (a proxy's).
  const url = new URL(`${context.settings.googleApiUrl.replace(/\/+$/, '')}${path}`);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
  }
  let answer: Awaited<ReturnType<ToolContext['client']['request']>>;
  try {
    answer = await context.client.request(method, url, {
      headers: { authorization: `Bearer ${context.accessToken}` },
      ...(options.body === undefined ? {} : { body: options.body }),
      timeoutMs: context.settings.timeoutMs,
    });
  } catch (error) {
    // The client's message names method and origin only, never the headers (the token).
    const what =
      error instanceof JsonClientError && error.kind === 'timeout' ? `did not answer within ${context.settings.timeoutMs} ms` : 'could not be reached';
    throw new ServiceError('unavailable', `Google ${what}; try again`, { details: { reason: 'provider_unavailable' } });
  }
  if (answer.status >= 200 && answer.status < 300) return (answer.json ?? {}) as Record<string, unknown>;
  throw providerError(answer.status, answer.json, context.scope);
}

/** Google's error body `{error: {code, message, status, errors: [{reason}]}}`, read defensively. */
function readGoogleError(json: unknown): { reason: string; message: string } {
  const error = (json as { error?: { message?: unknown; status?: unknown; errors?: { reason?: unknown }[] } } | undefined)?.error;
  const reason = error?.errors?.[0]?.reason ?? error?.status ?? 'unknown';
  // The provider's text is shown to the caller: capped, and it never holds our token (Google does not echo it).
  const message = typeof error?.message === 'string' ? error.message.slice(0, 300) : '';
  return { reason: String(reason).slice(0, 64), message };
}

// Google answers quota refusals with 403 and these reasons: they are "later", not "never".
const quotaReasons = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded']);

/** Maps a provider refusal onto the catalogue, keeping the provider's reason in `details.provider_reason`. */
export function providerError(status: number, json: unknown, scope: string): ServiceError {
  const { reason, message } = readGoogleError(json);
  const details = { reason: 'provider_refused', provider_status: status, provider_reason: reason };
  const said = message === '' ? reason : `${reason}: ${message}`;
  if (status === 401) {
    return new CredentialRefused(
      'unauthorized',
      `Google refused the stored credential (${said}); the connection is marked needs_reconnect: reconnect with POST /v1/connect`,
      { details: { ...details, reason: 'credential_refused' } },
    );
  }
  if (status === 429 || status >= 500 || (status === 403 && quotaReasons.has(reason))) {
    return new ServiceError('unavailable', `Google is unavailable or rate-limiting (${status} ${said}); try again later`, { retryable: true, details });
  }
  if (status === 403 && (reason === 'insufficientPermissions' || reason === 'ACCESS_TOKEN_SCOPE_INSUFFICIENT')) {
    return new ServiceError('forbidden', `Google refused: the credential lacks scope ${scope} (${reason}); reconnect granting it`, {
      details: { ...details, scope },
    });
  }
  if (status === 403) return new ServiceError('forbidden', `Google refused the call (${said})`, { details });
  if (status === 404 || status === 410) return new ServiceError('not_found', `Google found no such item (${said})`, { details });
  if (status >= 400 && status < 500) return new ServiceError('invalid_request', `Google refused the request (${status} ${said})`, { details });
  return new ServiceError('unavailable', `Google answered ${status} (${said})`, { retryable: false, details });
}

/** Calendar ids hold `@` and `#`; message ids are plain: both are encoded as one path segment. */
export const segment = (value: string) => encodeURIComponent(value);
