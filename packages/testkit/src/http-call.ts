/** What a JSON HTTP call answered: status, headers, raw text and the parsed body when it was JSON. */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever shape the route answers.
  json: any;
}

export interface HttpCallInit {
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as it is (for malformed bodies). */
  body?: unknown;
  /** `Authorization: Bearer <bearer>`; null sends none. */
  bearer?: string | null;
}

/**
 * A plain HTTP call for tests, for what an SDK would hide (raw bodies, missing bearers, exact statuses).
 *
 * @example const answer = await httpCall(url, 'POST', '/v1/recall', { body: { query: 'x' }, bearer: token })
 */
export async function httpCall(baseUrl: string, method: string, path: string, init: HttpCallInit = {}): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.bearer !== undefined && init.bearer !== null) headers.authorization = `Bearer ${init.bearer}`;
  if (init.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
