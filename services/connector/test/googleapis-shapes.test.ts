import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { calendar } from '@googleapis/calendar';
import { auth, gmail } from '@googleapis/gmail';
import { testEngines } from '@platform/testkit/databases';
import type { RecordedRequest } from '@platform/testkit/google-apis';
import { calendarEvents, mailModify, startWorkspace, type Workspace } from './workspace.ts';

/**
 * Google's own generated clients (@googleapis/gmail and @googleapis/calendar, the per-API packages of `googleapis`)
 * know the real routes from Google's discovery documents. Each tool and the official client do the same operation
 * against the stand-in, and their requests must agree on method, path, query and body shape: a route or a parameter
 * name that only our code and our stand-in believe in fails here.
 */
const engine = testEngines()[0];
if (!engine) throw new Error('no test engine');

describe('request shapes: the tools against the official Google clients', () => {
  let w: Workspace;
  let user: Awaited<ReturnType<Workspace['connectedUser']>>;
  let official: { gmail: ReturnType<typeof gmail>; calendar: ReturnType<typeof calendar> };

  before(async () => {
    w = await startWorkspace(engine);
    user = await w.connectedUser([mailModify, calendarEvents]);
    // The official clients take the same access token; a far expiry means they never try to refresh it.
    const client = new auth.OAuth2();
    client.setCredentials({ access_token: user.credential.accessToken, expiry_date: Date.now() + 3_600_000 });
    const options = { rootUrl: `${w.google.url}/`, auth: client };
    official = { gmail: gmail({ version: 'v1', ...options }), calendar: calendar({ version: 'v3', ...options }) };
  });
  after(() => w.close());

  /** The requests the stand-in saw during `fn`. */
  async function during(fn: () => Promise<unknown>): Promise<RecordedRequest[]> {
    const from = w.google.requests.length;
    await fn();
    return w.google.requests.slice(from);
  }

  /** What must agree: method, path, query (names and values, order aside) and the body's member names. */
  function shape(request: RecordedRequest | undefined) {
    assert.ok(request, 'a request was made');
    const query = Object.fromEntries(Object.entries(request.query).sort(([a], [b]) => a.localeCompare(b)));
    const body = request.body && typeof request.body === 'object' ? Object.keys(request.body).sort() : request.body;
    return { method: request.method, path: request.path, query, body, authorization: request.authorization };
  }

  async function ours(tool: string, args: Record<string, unknown>): Promise<RecordedRequest[]> {
    return during(async () => {
      const answer = await w.invoke(user.token, tool, args, { confirmed: true });
      assert.equal(answer.status, 200, answer.text);
    });
  }

  test('mail_send is users.messages.send with a raw message', async () => {
    const [tool] = await ours('mail_send', { to: ['bob@example.com'], subject: 'Shapes', body: 'Same route?' });
    const raw = (tool?.body as { raw: string } | undefined)?.raw;
    const [theirs] = await during(() => official.gmail.users.messages.send({ userId: 'me', requestBody: { raw } }));
    assert.deepEqual(shape(tool), shape(theirs));
  });

  test('mail_search is users.messages.list then users.messages.get in metadata format', async () => {
    // Two messages match (the tool's and the official client's send): one list, then one get per message.
    const [list, get, ...rest] = await ours('mail_search', { query: 'subject:Shapes', max_results: 5 });
    assert.equal(rest.length, 1);
    const id = get?.path.split('/').at(-1) as string;
    const [theirList] = await during(() => official.gmail.users.messages.list({ userId: 'me', q: 'subject:Shapes', maxResults: 5 }));
    const [theirGet] = await during(() =>
      official.gmail.users.messages.get({ userId: 'me', id, format: 'metadata', metadataHeaders: ['From', 'Subject', 'Date'] }),
    );
    assert.deepEqual(shape(list), shape(theirList));
    assert.deepEqual(shape(get), shape(theirGet));
  });

  test('mail_read is users.messages.get in full format', async () => {
    const id = w.google.messages.at(-1)?.id as string;
    const [tool] = await ours('mail_read', { message_id: id });
    const [theirs] = await during(() => official.gmail.users.messages.get({ userId: 'me', id, format: 'full' }));
    assert.deepEqual(shape(tool), shape(theirs));
  });

  test('calendar_create, calendar_update and calendar_list are events.insert, events.patch and events.list', async () => {
    // A shared calendar's id holds `@` and `#`: both clients must encode it the same way as one path segment.
    const calendarId = 'en.team#shared@group.calendar.google.com';
    const event = { calendar_id: calendarId, summary: 'Shapes', start: '2026-03-02T09:00:00Z', end: '2026-03-02T10:00:00Z', attendees: ['bob@example.com'] };
    const [create] = await ours('calendar_create', event);
    const [theirCreate] = await during(() =>
      official.calendar.events.insert({
        calendarId,
        sendUpdates: 'all',
        requestBody: { summary: event.summary, start: { dateTime: event.start }, end: { dateTime: event.end }, attendees: [{ email: 'bob@example.com' }] },
      }),
    );
    assert.deepEqual(shape(create), shape(theirCreate));
    assert.deepEqual(create?.body, theirCreate?.body, 'the same event body');

    const eventId = w.google.events(calendarId)[0]?.id as string;
    const [update] = await ours('calendar_update', { calendar_id: calendarId, event_id: eventId, summary: 'Moved' });
    const [theirUpdate] = await during(() => official.calendar.events.patch({ calendarId, eventId, sendUpdates: 'all', requestBody: { summary: 'Moved' } }));
    assert.deepEqual(shape(update), shape(theirUpdate));

    const window = { time_min: '2026-03-02T00:00:00Z', time_max: '2026-03-03T00:00:00Z', max_results: 10 };
    const [list] = await ours('calendar_list', window);
    const [theirList] = await during(() =>
      official.calendar.events.list({
        calendarId: 'primary',
        timeMin: window.time_min,
        timeMax: window.time_max,
        maxResults: 10,
        singleEvents: true,
        orderBy: 'startTime',
      }),
    );
    assert.deepEqual(shape(list), shape(theirList));
  });
});
