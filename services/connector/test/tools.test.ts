import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { parseRawMessage } from '@platform/testkit/google-apis';
import { startWorkspace, type Workspace } from './workspace.ts';

for (const engine of testEngines()) {
  describe(`workspace tools on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine);
    });
    after(() => w.close());

    /** The requests the stand-in saw during `fn`. */
    async function during(fn: () => Promise<unknown>) {
      const from = w.google.requests.length;
      await fn();
      return w.google.requests.slice(from);
    }

    test('mail_send: one POST …/messages/send with the bearer and an RFC 2822 raw message; only id and thread id back', async () => {
      const user = await w.connectedUser();
      const args = { to: ['bob@example.com', 'carol@example.com'], cc: ['dan@example.com'], subject: 'Déjeuner à 13 h ? ✓', body: 'Hello Bob,\nsee you.\n' };
      let answer: Awaited<ReturnType<Workspace['invoke']>> | undefined;
      const [request, ...rest] = await during(async () => {
        answer = await w.invoke(user.token, 'mail_send', args, { confirmed: true });
      });
      assert.equal(rest.length, 0);
      assert.equal(answer?.status, 200, answer?.text);
      assert.equal(request?.method, 'POST');
      assert.equal(request?.path, '/gmail/v1/users/me/messages/send');
      assert.equal(request?.authorization, `Bearer ${user.credential.accessToken}`);
      assert.deepEqual(Object.keys(request?.body as object), ['raw']);
      const raw = (request?.body as { raw: string } | undefined)?.raw ?? '';
      assert.match(raw, /^[A-Za-z0-9_-]+$/, 'base64url without padding');
      const parsed = parseRawMessage(raw);
      assert.equal(parsed.headers.to, 'bob@example.com, carol@example.com');
      assert.equal(parsed.headers.cc, 'dan@example.com');
      assert.equal(parsed.headers.subject, args.subject);
      assert.match(parsed.headers['content-type'] ?? '', /text\/plain; charset="UTF-8"/);
      assert.equal(parsed.body, args.body);
      const sent = w.google.messages.at(-1);
      assert.deepEqual(answer?.body.data, { connector: 'google-workspace', tool: 'mail_send', result: { id: sent?.id, thread_id: sent?.threadId } });
    });

    test('mail_send: a subject with CR/LF cannot add a header (it is encoded)', async () => {
      const user = await w.connectedUser();
      const args = { to: ['bob@example.com'], subject: 'hi\r\nBcc: eve@example.com', body: 'x' };
      const [request] = await during(() => w.invoke(user.token, 'mail_send', args, { confirmed: true }));
      const parsed = parseRawMessage((request?.body as { raw: string } | undefined)?.raw ?? '');
      assert.equal(parsed.headers.bcc, undefined);
      assert.equal(parsed.headers.subject, args.subject);
    });

    test('mail_search: list with q and maxResults, then each message as metadata; ids, sender, subject, date, snippet', async () => {
      const user = await w.connectedUser();
      const date = 'Sun, 01 Mar 2026 09:00:00 +0000';
      const first = w.google.addMessage({ from: 'Alice <alice@example.com>', to: 'me@example.com', subject: 'Plans', date, text: 'Lunch on Friday?' });
      const second = w.google.addMessage({ from: 'alice@example.com', to: 'me@example.com', subject: 'Re: Plans', date, text: 'Or Saturday.' });
      w.google.addMessage({ from: 'zed@example.com', to: 'me@example.com', subject: 'Other', date, text: 'unrelated' });
      let answer: Awaited<ReturnType<Workspace['invoke']>> | undefined;
      const requests = await during(async () => {
        answer = await w.invoke(user.token, 'mail_search', { query: 'from:alice', max_results: 1 });
      });
      assert.equal(answer?.status, 200, answer?.text);
      assert.deepEqual(
        requests.map((r) => [r.method, r.path, r.query]),
        [
          ['GET', '/gmail/v1/users/me/messages', { q: ['from:alice'], maxResults: ['1'] }],
          ['GET', `/gmail/v1/users/me/messages/${second}`, { format: ['metadata'], metadataHeaders: ['From', 'Subject', 'Date'] }],
        ],
      );
      assert.deepEqual(answer?.body.data.result, {
        messages: [{ id: second, thread_id: second, snippet: 'Or Saturday.', from: 'alice@example.com', subject: 'Re: Plans', date }],
        next_page_token: '1',
      });
      const next = await w.invoke(user.token, 'mail_search', { query: 'from:alice', max_results: 1, page_token: '1' });
      assert.equal(next.body.data.result.messages[0].id, first);
      assert.equal(next.body.data.result.next_page_token, null);
      const none = await w.invoke(user.token, 'mail_search', { query: 'from:nobody' });
      assert.deepEqual(none.body.data.result, { messages: [], next_page_token: null });
    });

    test('mail_read: format=full; the headers that matter and the text/plain part, not the HTML', async () => {
      const user = await w.connectedUser();
      const id = w.google.addMessage({
        from: 'alice@example.com',
        to: 'me@example.com',
        cc: 'bob@example.com',
        subject: 'Agenda',
        date: 'Sun, 01 Mar 2026 09:00:00 +0000',
        text: 'Point 1\nPoint 2',
        html: '<p>Point 1</p><p>Point 2</p>',
      });
      const [request] = await during(async () => {
        const answer = await w.invoke(user.token, 'mail_read', { message_id: id });
        assert.deepEqual(answer.body.data.result, {
          id,
          thread_id: id,
          from: 'alice@example.com',
          to: 'me@example.com',
          cc: 'bob@example.com',
          subject: 'Agenda',
          date: 'Sun, 01 Mar 2026 09:00:00 +0000',
          labels: ['INBOX'],
          body: 'Point 1\nPoint 2',
          truncated: false,
        });
      });
      assert.deepEqual([request?.method, request?.path, request?.query], ['GET', `/gmail/v1/users/me/messages/${id}`, { format: ['full'] }]);
    });

    test('calendar_list: singleEvents and orderBy=startTime with the window; events soonest first, scoped fields only', async () => {
      const user = await w.connectedUser();
      const calendar = 'team@group.calendar.google.com';
      const late = w.google.addEvent(calendar, { summary: 'Late', start: { dateTime: '2026-03-02T15:00:00Z' }, end: { dateTime: '2026-03-02T16:00:00Z' } });
      const early = w.google.addEvent(calendar, {
        summary: 'Early',
        description: 'standup',
        start: { dateTime: '2026-03-02T09:00:00Z' },
        end: { dateTime: '2026-03-02T09:15:00Z' },
        attendees: [{ email: 'bob@example.com' }],
      });
      w.google.addEvent(calendar, { summary: 'Outside', start: { dateTime: '2026-03-05T09:00:00Z' }, end: { dateTime: '2026-03-05T10:00:00Z' } });
      const args = { calendar_id: calendar, time_min: '2026-03-02T00:00:00Z', time_max: '2026-03-03T00:00:00Z', max_results: 10 };
      let answer: Awaited<ReturnType<Workspace['invoke']>> | undefined;
      const [request] = await during(async () => {
        answer = await w.invoke(user.token, 'calendar_list', args);
      });
      assert.equal(request?.path, '/calendar/v3/calendars/team%40group.calendar.google.com/events');
      assert.deepEqual(request?.query, {
        timeMin: [args.time_min],
        timeMax: [args.time_max],
        maxResults: ['10'],
        singleEvents: ['true'],
        orderBy: ['startTime'],
      });
      assert.deepEqual(answer?.body.data.result, {
        events: [
          {
            id: early.id,
            status: 'confirmed',
            summary: 'Early',
            description: 'standup',
            start: '2026-03-02T09:00:00Z',
            end: '2026-03-02T09:15:00Z',
            attendees: [{ email: 'bob@example.com', response: 'needsAction' }],
            link: early.htmlLink,
          },
          {
            id: late.id,
            status: 'confirmed',
            summary: 'Late',
            description: null,
            start: '2026-03-02T15:00:00Z',
            end: '2026-03-02T16:00:00Z',
            attendees: [],
            link: late.htmlLink,
          },
        ],
        next_page_token: null,
      });
      assert.doesNotMatch(answer?.text ?? '', /etag|iCalUID|creator|organizer/);
    });

    test('calendar_create: POST events?sendUpdates=all in Calendar’s shape; the created event back', async () => {
      const user = await w.connectedUser();
      const args = { summary: 'Review', start: '2026-03-03T10:00:00Z', end: '2026-03-03T11:00:00Z', attendees: ['bob@example.com'], description: 'Q1' };
      let answer: Awaited<ReturnType<Workspace['invoke']>> | undefined;
      const [request] = await during(async () => {
        answer = await w.invoke(user.token, 'calendar_create', args, { confirmed: true });
      });
      assert.equal(answer?.status, 200, answer?.text);
      assert.deepEqual([request?.method, request?.path, request?.query], ['POST', '/calendar/v3/calendars/primary/events', { sendUpdates: ['all'] }]);
      assert.deepEqual(request?.body, {
        summary: 'Review',
        description: 'Q1',
        start: { dateTime: '2026-03-03T10:00:00Z' },
        end: { dateTime: '2026-03-03T11:00:00Z' },
        attendees: [{ email: 'bob@example.com' }],
      });
      const created = w.google.events('primary').at(-1);
      assert.equal(answer?.body.data.result.event.id, created?.id);
      assert.deepEqual(answer?.body.data.result.event.attendees, [{ email: 'bob@example.com', response: 'needsAction' }]);
    });

    test('calendar_update: PATCH with only the fields given', async () => {
      const user = await w.connectedUser();
      const event = w.google.addEvent('primary', { summary: 'Old', start: { dateTime: '2026-03-04T10:00:00Z' }, end: { dateTime: '2026-03-04T11:00:00Z' } });
      const args = { event_id: event.id as string, summary: 'New', end: '2026-03-04T11:30:00Z' };
      let answer: Awaited<ReturnType<Workspace['invoke']>> | undefined;
      const [request] = await during(async () => {
        answer = await w.invoke(user.token, 'calendar_update', args, { confirmed: true });
      });
      assert.deepEqual([request?.method, request?.path], ['PATCH', `/calendar/v3/calendars/primary/events/${event.id}`]);
      assert.deepEqual(request?.body, { summary: 'New', end: { dateTime: '2026-03-04T11:30:00Z' } });
      assert.equal(answer?.body.data.result.event.summary, 'New');
      assert.equal(answer?.body.data.result.event.start, '2026-03-04T10:00:00Z');
      assert.equal(answer?.body.data.result.event.end, '2026-03-04T11:30:00Z');
    });
  });
}
