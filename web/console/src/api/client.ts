import { currentToken, signOut } from '../auth/sign-in.ts';

/** A refusal in the platform's envelope: status, code and message as the service wrote them. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Listeners told when the router refuses the token (expired, revoked): the app shows the sign-in again. */
const signedOut = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signedOut.add(listener);
  return () => signedOut.delete(listener);
}

/** Headers every call carries: the user's token for the router, never anything else. */
export function authHeaders(): Record<string, string> {
  const token = currentToken();
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

export function handleUnauthorized(status: number): void {
  if (status !== 401) return;
  signOut();
  for (const listener of signedOut) listener();
}

/**
 * Calls the router (same origin) with the user's token and unwraps `{ok, data}`; a refusal throws ApiError with the
 * service's own message. `body` is sent as JSON.
 */
export async function api<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const headers: Record<string, string> = authHeaders();
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  handleUnauthorized(response.status);
  const text = await response.text();
  let parsed: { ok?: boolean; data?: T; error?: { code?: string; message?: string } | string; message?: string } = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(response.status, 'invalid_response', `${path} answered ${response.status} without JSON`);
  }
  if (response.ok && parsed.ok !== false) return (parsed.data ?? parsed) as T;
  // The platform's envelope, or the marketplace's `{error, message}`.
  const error = typeof parsed.error === 'object' ? parsed.error : { code: parsed.error, message: parsed.message };
  throw new ApiError(response.status, error?.code ?? 'error', error?.message ?? `${path} answered ${response.status}`);
}
