import type { ToolDefinition } from '../../types.ts';
import { googleCall, segment } from '../google-api.ts';
import { rawMessage } from './rfc2822.ts';

export const mailModify = 'https://www.googleapis.com/auth/gmail.modify';

const messages = '/gmail/v1/users/me/messages';
const address = { type: 'string', format: 'email' };
/** The most body text mail_read returns; the rest is cut and `truncated` says so. */
const maxBodyChars = 32_000;

interface GmailPart {
  mimeType?: string;
  headers?: { name?: string; value?: string }[];
  body?: { data?: string };
  parts?: GmailPart[];
}

function header(part: GmailPart | undefined, name: string): string | undefined {
  const lower = name.toLowerCase();
  return part?.headers?.find((entry) => entry.name?.toLowerCase() === lower)?.value;
}

/** The first part of `mimeType`, depth first, as Gmail nests multipart/alternative inside multipart/mixed. */
function findPart(part: GmailPart | undefined, mimeType: string): GmailPart | undefined {
  if (!part) return undefined;
  if (part.mimeType === mimeType && part.body?.data) return part;
  for (const child of part.parts ?? []) {
    const found = findPart(child, mimeType);
    if (found) return found;
  }
  return undefined;
}

/** Plain text of a message: its text/plain part, else its HTML with tags dropped (a reading aid, not a renderer). */
export function plainTextOf(payload: GmailPart | undefined): string {
  const plain = findPart(payload, 'text/plain');
  if (plain?.body?.data) return Buffer.from(plain.body.data, 'base64url').toString('utf8');
  const html = findPart(payload, 'text/html');
  if (!html?.body?.data) return '';
  return Buffer.from(html.body.data, 'base64url')
    .toString('utf8')
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/p>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export const mailSend: ToolDefinition = {
  name: 'mail_send',
  description: 'Send an email from the user’s mailbox.',
  scope: mailModify,
  consequential: true,
  arguments: {
    type: 'object',
    properties: {
      to: { type: 'array', items: address, minItems: 1, maxItems: 50, description: 'Recipient addresses' },
      cc: { type: 'array', items: address, maxItems: 50, description: 'Copy addresses' },
      subject: { type: 'string', maxLength: 998, description: 'Subject line' },
      body: { type: 'string', maxLength: 50_000, description: 'Plain-text body' },
    },
    required: ['to', 'subject', 'body'],
    additionalProperties: false,
  },
  describe: (args) => `send an email to ${[...(args.to as string[]), ...((args.cc as string[]) ?? [])].join(', ')} with subject "${args.subject}"`,
  async run(context, args) {
    const raw = rawMessage({ to: args.to as string[], cc: args.cc as string[] | undefined, subject: args.subject as string, body: args.body as string });
    const sent = await googleCall(context, 'POST', `${messages}/send`, { body: { raw } });
    return { id: sent.id, thread_id: sent.threadId };
  },
};

export const mailSearch: ToolDefinition = {
  name: 'mail_search',
  description: 'Search the mailbox with Gmail query syntax; returns message ids, senders, subjects and snippets.',
  scope: mailModify,
  consequential: false,
  arguments: {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: 1_000, description: 'Gmail search query, e.g. from:alice newer_than:7d' },
      max_results: { type: 'integer', minimum: 1, maximum: 50, description: '1 to 50, default 10' },
      page_token: { type: 'string', maxLength: 200, description: 'next_page_token of a previous search' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  async run(context, args) {
    const list = await googleCall(context, 'GET', messages, {
      query: { q: args.query as string, maxResults: (args.max_results as number | undefined) ?? 10, pageToken: args.page_token as string | undefined },
    });
    const found = (list.messages as { id: string }[] | undefined) ?? [];
    // The list holds ids only; sender, subject and date need each message's metadata (fetched together).
    const details = await Promise.all(
      found.map((message) =>
        googleCall(context, 'GET', `${messages}/${segment(message.id)}`, {
          query: { format: 'metadata', metadataHeaders: ['From', 'Subject', 'Date'] },
        }),
      ),
    );
    return {
      messages: details.map((message) => {
        const payload = message.payload as GmailPart | undefined;
        return {
          id: message.id,
          thread_id: message.threadId,
          snippet: message.snippet ?? '',
          from: header(payload, 'From') ?? null,
          subject: header(payload, 'Subject') ?? null,
          date: header(payload, 'Date') ?? null,
        };
      }),
      next_page_token: list.nextPageToken ?? null,
    };
  },
};

export const mailRead: ToolDefinition = {
  name: 'mail_read',
  description: 'Read one message: headers that matter and its plain-text body.',
  scope: mailModify,
  consequential: false,
  arguments: {
    type: 'object',
    properties: { message_id: { type: 'string', minLength: 1, maxLength: 200, description: 'A message id from mail_search' } },
    required: ['message_id'],
    additionalProperties: false,
  },
  async run(context, args) {
    const message = await googleCall(context, 'GET', `${messages}/${segment(args.message_id as string)}`, { query: { format: 'full' } });
    const payload = message.payload as GmailPart | undefined;
    const body = plainTextOf(payload);
    return {
      id: message.id,
      thread_id: message.threadId,
      from: header(payload, 'From') ?? null,
      to: header(payload, 'To') ?? null,
      cc: header(payload, 'Cc') ?? null,
      subject: header(payload, 'Subject') ?? null,
      date: header(payload, 'Date') ?? null,
      labels: (message.labelIds as string[] | undefined) ?? [],
      body: body.slice(0, maxBodyChars),
      truncated: body.length > maxBodyChars,
    };
  },
};
