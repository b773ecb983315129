import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnFreePort } from './local-server.ts';

export const gmailModify = 'https://www.googleapis.com/auth/gmail.modify';
export const calendarEventsScope = 'https://www.googleapis.com/auth/calendar.events';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string[]>;
  authorization: string | undefined;
  body: unknown;
}

export interface StoredMessage {
  id: string;
  threadId: string;
  from: string;
  to: string;
  cc?: string;
  subject: string;
  date: string;
  text: string;
  html?: string;
  labelIds: string[];
}

export interface ScriptedFailure {
  status: number;
  reason: string;
  message?: string;
}

type Json = Record<string, unknown>;
type Route = { method: string; pattern: RegExp; scopes: string[]; handle: (match: RegExpMatchArray, req: RecordedRequest) => [number, Json] };

const statusNames: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  410: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** Google's error body, as its JSON APIs answer it. */
export function googleError(status: number, reason: string, message = reason): Json {
  return { error: { code: status, message, errors: [{ message, domain: 'global', reason }], status: statusNames[status] ?? 'UNKNOWN' } };
}

const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** Reads an RFC 2822 message as Gmail's `raw` carries it: unfolded headers (RFC 2047 words decoded) and the body. */
export function parseRawMessage(raw: string): { headers: Record<string, string>; body: string } {
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const rawBody = split < 0 ? '' : text.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const value = line
      .slice(colon + 1)
      .trim()
      .replace(/=\?UTF-8\?B\?([^?]*)\?=\s*/gi, (_word, data: string) => Buffer.from(data, 'base64').toString('utf8'));
    headers[line.slice(0, colon).toLowerCase()] = value;
  }
  const base64 = /base64/i.test(headers['content-transfer-encoding'] ?? '');
  return { headers, body: base64 ? Buffer.from(rawBody.replace(/\s+/g, ''), 'base64').toString('utf8') : rawBody };
}

/**
 * A local stand-in for the Google REST routes the connector's tools use (Gmail v1 messages send/list/get,
 * Calendar v3 events list/insert/patch), in Google's request and response shapes: bearer tokens the test grants
 * with scopes, Google's error body `{error: {code, message, status, errors: [{reason}]}}`, every request recorded,
 * and failures a test scripts. State is in memory; ids are counters, so answers are deterministic.
 *
 * @example const google = await startGoogleApis(); google.grant('ya29.x', [gmailModify]); ...; await google.close()
 */
export async function startGoogleApis(
  options: {
    account?: string;
    now?: () => Date;
    /** Scopes of a token not granted with `grant`: an authorization server's view (the OAuth test server's `scopesOf`). */
    tokenScopes?: (token: string) => Promise<readonly string[] | undefined>;
  } = {},
) {
  const account = options.account ?? 'me@example.com';
  const now = options.now ?? (() => new Date());
  const tokens = new Map<string, Set<string>>();
  const requests: RecordedRequest[] = [];
  const messages: StoredMessage[] = [];
  const calendars = new Map<string, Json[]>();
  const failures: { method?: string; path: RegExp; failure: ScriptedFailure; times: number }[] = [];
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}${(++counter).toString(16).padStart(8, '0')}`;

  function messageResource(message: StoredMessage, format: string, wanted: string[]): Json {
    const all = [
      ['From', message.from],
      ['To', message.to],
      ...(message.cc ? [['Cc', message.cc]] : []),
      ['Subject', message.subject],
      ['Date', message.date],
      ['Message-ID', `<${message.id}@mail.example.com>`],
    ].map(([name, value]) => ({ name: name as string, value: value as string }));
    const lower = wanted.map((name) => name.toLowerCase());
    const headers = format === 'metadata' && wanted.length > 0 ? all.filter((h) => lower.includes(h.name.toLowerCase())) : all;
    const textPart = { partId: '0', mimeType: 'text/plain', filename: '', headers: [], body: { size: message.text.length, data: b64url(message.text) } };
    const htmlPart = message.html
      ? { partId: '1', mimeType: 'text/html', filename: '', headers: [], body: { size: message.html.length, data: b64url(message.html) } }
      : undefined;
    const payload: Json =
      format === 'metadata'
        ? { mimeType: htmlPart ? 'multipart/alternative' : 'text/plain', headers }
        : htmlPart
          ? { partId: '', mimeType: 'multipart/alternative', filename: '', headers, body: { size: 0 }, parts: [textPart, htmlPart] }
          : { ...textPart, partId: '', headers };
    return {
      id: message.id,
      threadId: message.threadId,
      labelIds: message.labelIds,
      snippet: message.text.slice(0, 100),
      sizeEstimate: message.text.length + 200,
      historyId: '1000',
      internalDate: String(Date.parse(message.date) || now().getTime()),
      payload,
    };
  }

  function matches(message: StoredMessage, q: string): boolean {
    return q
      .split(/\s+/)
      .filter(Boolean)
      .every((term) => {
        const [field, value] = term.includes(':') ? (term.split(':', 2) as [string, string]) : ['', term];
        const find = (text: string | undefined) => (text ?? '').toLowerCase().includes(value.toLowerCase());
        if (field === 'from') return find(message.from);
        if (field === 'to') return find(message.to);
        if (field === 'subject') return find(message.subject);
        return find(message.subject) || find(message.text) || find(message.from);
      });
  }

  function page<T>(items: T[], query: Record<string, string[]>, fallback: number, cap: number) {
    const offset = Number(query.pageToken?.[0] ?? 0);
    const size = Math.min(Number(query.maxResults?.[0] ?? fallback), cap);
    const slice = items.slice(offset, offset + size);
    return { slice, next: offset + size < items.length ? String(offset + size) : undefined };
  }

  const eventsOf = (calendarId: string) => {
    const list = calendars.get(calendarId) ?? [];
    calendars.set(calendarId, list);
    return list;
  };
  const startOf = (event: Json) => Date.parse(((event.start as Json)?.dateTime ?? (event.start as Json)?.date) as string);
  const endOf = (event: Json) => Date.parse(((event.end as Json)?.dateTime ?? (event.end as Json)?.date) as string);

  const routes: Route[] = [
    {
      method: 'POST',
      pattern: /^\/gmail\/v1\/users\/me\/messages\/send$/,
      scopes: [gmailModify, 'https://www.googleapis.com/auth/gmail.send', 'https://mail.google.com/'],
      handle: (_m, req) => {
        const raw = (req.body as Json | undefined)?.raw;
        if (typeof raw !== 'string' || raw === '')
          return [400, googleError(400, 'invalidArgument', "'raw' RFC822 payload message string or uploading message via /upload/* URL required")];
        const { headers, body } = parseRawMessage(raw);
        if (!headers.to) return [400, googleError(400, 'invalidArgument', 'Recipient address required')];
        const id = nextId('18c');
        const message: StoredMessage = {
          id,
          threadId: id,
          from: account,
          to: headers.to,
          subject: headers.subject ?? '',
          date: now().toUTCString(),
          text: body,
          labelIds: ['SENT'],
        };
        if (headers.cc) message.cc = headers.cc;
        messages.push(message);
        return [200, { id, threadId: id, labelIds: ['SENT'] }];
      },
    },
    {
      method: 'GET',
      pattern: /^\/gmail\/v1\/users\/me\/messages$/,
      scopes: [gmailModify, 'https://www.googleapis.com/auth/gmail.readonly', 'https://mail.google.com/'],
      handle: (_m, req) => {
        const found = messages.filter((message) => matches(message, req.query.q?.[0] ?? '')).reverse();
        const { slice, next } = page(found, req.query, 100, 500);
        // Gmail omits `messages` when nothing matched.
        return [
          200,
          {
            ...(slice.length ? { messages: slice.map((m) => ({ id: m.id, threadId: m.threadId })) } : {}),
            ...(next ? { nextPageToken: next } : {}),
            resultSizeEstimate: found.length,
          },
        ];
      },
    },
    {
      method: 'GET',
      pattern: /^\/gmail\/v1\/users\/me\/messages\/([^/]+)$/,
      scopes: [gmailModify, 'https://www.googleapis.com/auth/gmail.readonly', 'https://mail.google.com/'],
      handle: (m, req) => {
        const message = messages.find((candidate) => candidate.id === decodeURIComponent(m[1] as string));
        if (!message) return [404, googleError(404, 'notFound', 'Requested entity was not found.')];
        return [200, messageResource(message, req.query.format?.[0] ?? 'full', req.query.metadataHeaders ?? [])];
      },
    },
    {
      method: 'GET',
      pattern: /^\/calendar\/v3\/calendars\/([^/]+)\/events$/,
      scopes: [calendarEventsScope, 'https://www.googleapis.com/auth/calendar', 'https://www.googleapis.com/auth/calendar.readonly'],
      handle: (m, req) => {
        const q = (name: string) => req.query[name]?.[0];
        if (q('orderBy') === 'startTime' && q('singleEvents') !== 'true')
          return [400, googleError(400, 'invalid', 'The requested ordering is not available for the particular query.')];
        const min = q('timeMin') ? Date.parse(q('timeMin') as string) : -Infinity;
        const max = q('timeMax') ? Date.parse(q('timeMax') as string) : Infinity;
        const calendarId = decodeURIComponent(m[1] as string);
        const inWindow = eventsOf(calendarId).filter((event) => endOf(event) > min && startOf(event) < max);
        if (q('orderBy') === 'startTime') inWindow.sort((a, b) => startOf(a) - startOf(b));
        const { slice, next } = page(inWindow, req.query, 250, 2500);
        return [
          200,
          {
            kind: 'calendar#events',
            summary: calendarId,
            timeZone: 'UTC',
            accessRole: 'owner',
            defaultReminders: [],
            ...(next ? { nextPageToken: next } : {}),
            items: slice,
          },
        ];
      },
    },
    {
      method: 'POST',
      pattern: /^\/calendar\/v3\/calendars\/([^/]+)\/events$/,
      scopes: [calendarEventsScope, 'https://www.googleapis.com/auth/calendar'],
      handle: (m, req) => {
        const body = (req.body ?? {}) as Json;
        if (!body.start) return [400, googleError(400, 'required', 'Missing start time.')];
        if (!body.end) return [400, googleError(400, 'required', 'Missing end time.')];
        return [200, addEvent(decodeURIComponent(m[1] as string), body)];
      },
    },
    {
      method: 'PATCH',
      pattern: /^\/calendar\/v3\/calendars\/([^/]+)\/events\/([^/]+)$/,
      scopes: [calendarEventsScope, 'https://www.googleapis.com/auth/calendar'],
      handle: (m, req) => {
        const event = eventsOf(decodeURIComponent(m[1] as string)).find((candidate) => candidate.id === decodeURIComponent(m[2] as string));
        if (!event) return [404, googleError(404, 'notFound', 'Not Found')];
        const patch = (req.body ?? {}) as Json;
        if (Array.isArray(patch.attendees)) patch.attendees = (patch.attendees as Json[]).map((a) => ({ responseStatus: 'needsAction', ...a }));
        Object.assign(event, patch, { updated: now().toISOString(), sequence: (event.sequence as number) + 1 });
        return [200, event];
      },
    },
  ];

  /** Stores an event as Calendar's `events.insert` would, and returns the resource. */
  function addEvent(calendarId: string, fields: Json): Json {
    const id = nextId('evt');
    const stamp = now().toISOString();
    const attendees = Array.isArray(fields.attendees) ? (fields.attendees as Json[]).map((a) => ({ responseStatus: 'needsAction', ...a })) : undefined;
    const event: Json = {
      kind: 'calendar#event',
      etag: `"${counter}"`,
      id,
      status: 'confirmed',
      htmlLink: `https://www.google.com/calendar/event?eid=${id}`,
      created: stamp,
      updated: stamp,
      creator: { email: account, self: true },
      organizer: { email: account, self: true },
      iCalUID: `${id}@google.com`,
      sequence: 0,
      reminders: { useDefault: true },
      eventType: 'default',
      ...fields,
      ...(attendees ? { attendees } : {}),
    };
    eventsOf(calendarId).push(event);
    return event;
  }

  function answer(response: ServerResponse, status: number, body: Json, extra: Record<string, string> = {}) {
    response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...extra }).end(JSON.stringify(body));
  }

  async function serve(request: IncomingMessage, response: ServerResponse, text: string) {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const query: Record<string, string[]> = {};
    for (const [name, value] of url.searchParams) query[name] = [...(query[name] ?? []), value];
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      return answer(response, 400, googleError(400, 'parseError', 'Parse Error'));
    }
    const recorded: RecordedRequest = { method: request.method ?? 'GET', path: url.pathname, query, authorization: request.headers.authorization, body };
    requests.push(recorded);
    const scripted = failures.find((f) => f.times > 0 && (!f.method || f.method === recorded.method) && f.path.test(recorded.path));
    if (scripted) {
      scripted.times--;
      return answer(response, scripted.failure.status, googleError(scripted.failure.status, scripted.failure.reason, scripted.failure.message));
    }
    const bearer = /^Bearer (.+)$/.exec(recorded.authorization ?? '')?.[1];
    const known = bearer === undefined ? undefined : (tokens.get(bearer) ?? (await options.tokenScopes?.(bearer)));
    const scopes = known === undefined ? undefined : new Set(known);
    if (!scopes) {
      return answer(response, 401, googleError(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token.'), {
        'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"',
      });
    }
    for (const route of routes) {
      const match = route.method === recorded.method ? recorded.path.match(route.pattern) : null;
      if (!match) continue;
      if (!route.scopes.some((scope) => scopes.has(scope)))
        return answer(response, 403, googleError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.'));
      const [status, json] = route.handle(match, recorded);
      return answer(response, status, json);
    }
    return answer(response, 404, googleError(404, 'notFound', 'Not Found'));
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      serve(request, response, Buffer.concat(chunks).toString('utf8')).catch((error: unknown) =>
        answer(response, 500, googleError(500, 'backendError', String(error))),
      );
    });
  });
  const { port, close } = await listenOnFreePort(server);

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    messages,
    /** Makes `token` a valid access token holding `scopes`. */
    grant(token: string, scopes: readonly string[]) {
      tokens.set(token, new Set(scopes));
    },
    revoke(token: string) {
      tokens.delete(token);
    },
    /** Puts a message in the mailbox; returns its id. */
    addMessage(fields: Omit<StoredMessage, 'id' | 'threadId' | 'labelIds'> & { labelIds?: string[] }): string {
      const id = nextId('18b');
      messages.push({ labelIds: ['INBOX'], ...fields, id, threadId: id });
      return id;
    },
    addEvent,
    events: (calendarId = 'primary') => eventsOf(calendarId),
    /** The next `times` requests matching `method` and `path` get this failure (before any auth check). */
    failNext(match: { method?: string; path: RegExp }, failure: ScriptedFailure, times = 1) {
      failures.push({ ...match, failure, times });
    },
    close,
  };
}

export type GoogleApis = Awaited<ReturnType<typeof startGoogleApis>>;
