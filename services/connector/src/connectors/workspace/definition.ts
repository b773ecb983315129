import type { ArgumentsSchema, ConnectorDefinition } from '../types.ts';

const mailModify = 'https://www.googleapis.com/auth/gmail.modify';
const calendarEvents = 'https://www.googleapis.com/auth/calendar.events';

function args(properties: ArgumentsSchema['properties'], required: readonly string[]): ArgumentsSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}

const text = (description: string) => ({ type: 'string', description });

/** The workspace connector: Gmail v1 and Calendar v3, under the mail-modify and calendar-events scopes. */
export const workspaceConnector: ConnectorDefinition = {
  id: 'google-workspace',
  name: 'Google Workspace',
  description: "The user's Gmail mailbox and Google Calendar.",
  scopes: [
    { id: mailModify, description: 'Read, send and label mail (not delete it permanently)' },
    { id: calendarEvents, description: 'Read and write events on the calendars' },
  ],
  tools: [
    {
      name: 'mail_send',
      description: 'Send an email from the user’s mailbox.',
      scope: mailModify,
      consequential: true,
      arguments: args(
        { to: { type: 'array', items: { type: 'string' }, description: 'Recipient addresses' }, subject: text('Subject line'), body: text('Plain-text body') },
        ['to', 'subject', 'body'],
      ),
    },
    {
      name: 'mail_search',
      description: 'Search the mailbox with Gmail query syntax; returns message ids, senders, subjects and snippets.',
      scope: mailModify,
      consequential: false,
      arguments: args(
        { query: text('Gmail search query, e.g. from:alice newer_than:7d'), max_results: { type: 'integer', description: '1 to 50, default 10' } },
        ['query'],
      ),
    },
    {
      name: 'mail_read',
      description: 'Read one message: headers that matter and its plain-text body.',
      scope: mailModify,
      consequential: false,
      arguments: args({ message_id: text('A message id from mail_search') }, ['message_id']),
    },
    {
      name: 'calendar_list',
      description: 'List events of a calendar in a time window.',
      scope: calendarEvents,
      consequential: false,
      arguments: args(
        {
          calendar_id: text('Calendar id, default "primary"'),
          time_min: text('ISO 8601 start of the window'),
          time_max: text('ISO 8601 end of the window'),
          max_results: { type: 'integer', description: '1 to 250, default 25' },
        },
        [],
      ),
    },
    {
      name: 'calendar_create',
      description: 'Create an event (attendees are invited).',
      scope: calendarEvents,
      consequential: true,
      arguments: args(
        {
          calendar_id: text('Calendar id, default "primary"'),
          summary: text('Title'),
          start: text('ISO 8601 start'),
          end: text('ISO 8601 end'),
          attendees: { type: 'array', items: { type: 'string' }, description: 'Attendee addresses' },
          description: text('Event description'),
        },
        ['summary', 'start', 'end'],
      ),
    },
    {
      name: 'calendar_update',
      description: 'Change an event; only the fields given change (attendees are told).',
      scope: calendarEvents,
      consequential: true,
      arguments: args(
        {
          calendar_id: text('Calendar id, default "primary"'),
          event_id: text('The event to change'),
          summary: text('New title'),
          start: text('New ISO 8601 start'),
          end: text('New ISO 8601 end'),
          description: text('New description'),
        },
        ['event_id'],
      ),
    },
  ],
};
