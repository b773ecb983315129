import type { ConnectorDefinition } from '../types.ts';
import { calendarCreate, calendarEvents, calendarList, calendarUpdate } from './tools/calendar.ts';
import { mailModify, mailRead, mailSearch, mailSend } from './tools/mail.ts';

/**
 * The workspace connector: Gmail v1 and Calendar v3, under the mail-modify and calendar-events scopes. Each tool's
 * scope and `consequential` flag live with its code (tools/), so the catalogue and the gates cannot disagree with it.
 */
export const workspaceConnector: ConnectorDefinition = {
  id: 'google-workspace',
  name: 'Google Workspace',
  description: "The user's Gmail mailbox and Google Calendar.",
  scopes: [
    { id: mailModify, description: 'Read, send and label mail (not delete it permanently)' },
    { id: calendarEvents, description: 'Read and write events on the calendars' },
  ],
  tools: [mailSend, mailSearch, mailRead, calendarList, calendarCreate, calendarUpdate],
  oauth: {
    provider: 'GOOGLE',
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    revokeUrl: 'https://oauth2.googleapis.com/revoke',
    // Without both, Google returns a refresh token only on the first consent of a user, and never again.
    authorizeParams: { access_type: 'offline', prompt: 'consent' },
    // Google documents client_secret_post for web server apps (it accepts basic too).
    clientAuth: 'client_secret_post',
  },
};
