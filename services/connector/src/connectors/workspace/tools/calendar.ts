import type { ToolDefinition } from '../../types.ts';
import { googleCall, segment } from '../google-api.ts';

export const calendarEvents = 'https://www.googleapis.com/auth/calendar.events';

const calendarId = { type: 'string', minLength: 1, maxLength: 200, description: 'Calendar id, default "primary"' };
const dateTime = (description: string) => ({ type: 'string', format: 'date-time', description });
const events = (args: Record<string, unknown>) => `/calendar/v3/calendars/${segment((args.calendar_id as string | undefined) ?? 'primary')}/events`;

interface GoogleEvent {
  id?: string;
  status?: string;
  summary?: string;
  description?: string;
  htmlLink?: string;
  start?: { dateTime?: string; date?: string };
  end?: { dateTime?: string; date?: string };
  attendees?: { email?: string; responseStatus?: string }[];
}

/** The scoped view of an event: what a plan needs, not Google's whole resource (no etags, creators, conference data). */
function eventView(event: GoogleEvent) {
  return {
    id: event.id ?? null,
    status: event.status ?? null,
    summary: event.summary ?? null,
    description: event.description ?? null,
    // All-day events carry `date` instead of `dateTime`.
    start: event.start?.dateTime ?? event.start?.date ?? null,
    end: event.end?.dateTime ?? event.end?.date ?? null,
    attendees: (event.attendees ?? []).map((attendee) => ({ email: attendee.email ?? null, response: attendee.responseStatus ?? null })),
    link: event.htmlLink ?? null,
  };
}

/** The fields create and update share, in Google's shape; only those given are sent (PATCH semantics). */
function eventBody(args: Record<string, unknown>) {
  const body: Record<string, unknown> = {};
  if (args.summary !== undefined) body.summary = args.summary;
  if (args.description !== undefined) body.description = args.description;
  if (args.start !== undefined) body.start = { dateTime: args.start };
  if (args.end !== undefined) body.end = { dateTime: args.end };
  if (args.attendees !== undefined) body.attendees = (args.attendees as string[]).map((email) => ({ email }));
  return body;
}

const changes = (args: Record<string, unknown>) =>
  ['summary', 'start', 'end', 'attendees', 'description']
    .filter((field) => args[field] !== undefined)
    .map((field) => `${field} ${JSON.stringify(args[field])}`)
    .join(', ');

export const calendarList: ToolDefinition = {
  name: 'calendar_list',
  description: 'List events of a calendar in a time window, soonest first (recurring events expanded).',
  scope: calendarEvents,
  consequential: false,
  arguments: {
    type: 'object',
    properties: {
      calendar_id: calendarId,
      time_min: dateTime('ISO 8601 start of the window'),
      time_max: dateTime('ISO 8601 end of the window'),
      max_results: { type: 'integer', minimum: 1, maximum: 250, description: '1 to 250, default 25' },
      page_token: { type: 'string', maxLength: 200, description: 'next_page_token of a previous list' },
    },
    required: [],
    additionalProperties: false,
  },
  async run(context, args) {
    const list = await googleCall(context, 'GET', events(args), {
      query: {
        timeMin: args.time_min as string | undefined,
        timeMax: args.time_max as string | undefined,
        maxResults: (args.max_results as number | undefined) ?? 25,
        pageToken: args.page_token as string | undefined,
        // orderBy=startTime is only allowed with singleEvents, which also expands recurring events into instances.
        singleEvents: true,
        orderBy: 'startTime',
      },
    });
    return { events: ((list.items as GoogleEvent[] | undefined) ?? []).map(eventView), next_page_token: list.nextPageToken ?? null };
  },
};

export const calendarCreate: ToolDefinition = {
  name: 'calendar_create',
  description: 'Create an event (attendees are invited).',
  scope: calendarEvents,
  consequential: true,
  arguments: {
    type: 'object',
    properties: {
      calendar_id: calendarId,
      summary: { type: 'string', minLength: 1, maxLength: 1_000, description: 'Title' },
      start: dateTime('ISO 8601 start'),
      end: dateTime('ISO 8601 end'),
      attendees: { type: 'array', items: { type: 'string', format: 'email' }, maxItems: 100, description: 'Attendee addresses' },
      description: { type: 'string', maxLength: 8_000, description: 'Event description' },
    },
    required: ['summary', 'start', 'end'],
    additionalProperties: false,
  },
  describe: (args) => `create an event on calendar ${(args.calendar_id as string | undefined) ?? 'primary'}: ${changes(args)}`,
  async run(context, args) {
    // sendUpdates=all: the invitations are the point of naming attendees (and why the tool is consequential).
    const event = await googleCall(context, 'POST', events(args), { query: { sendUpdates: 'all' }, body: eventBody(args) });
    return { event: eventView(event as GoogleEvent) };
  },
};

export const calendarUpdate: ToolDefinition = {
  name: 'calendar_update',
  description: 'Change an event; only the fields given change (attendees are told).',
  scope: calendarEvents,
  consequential: true,
  arguments: {
    type: 'object',
    properties: {
      calendar_id: calendarId,
      event_id: { type: 'string', minLength: 1, maxLength: 1_024, description: 'The event to change' },
      summary: { type: 'string', minLength: 1, maxLength: 1_000, description: 'New title' },
      start: dateTime('New ISO 8601 start'),
      end: dateTime('New ISO 8601 end'),
      attendees: { type: 'array', items: { type: 'string', format: 'email' }, maxItems: 100, description: 'New attendee list (replaces it)' },
      description: { type: 'string', maxLength: 8_000, description: 'New description' },
    },
    required: ['event_id'],
    additionalProperties: false,
  },
  describe: (args) => `change event ${args.event_id} on calendar ${(args.calendar_id as string | undefined) ?? 'primary'}: ${changes(args) || 'no fields'}`,
  async run(context, args) {
    const event = await googleCall(context, 'PATCH', `${events(args)}/${segment(args.event_id as string)}`, {
      query: { sendUpdates: 'all' },
      body: eventBody(args),
    });
    return { event: eventView(event as GoogleEvent) };
  },
};
