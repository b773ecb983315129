import { createHash } from 'node:crypto';

/** What the browser is shown at the end of a connect flow. */
export interface CallbackPage {
  status: number;
  title: string;
  /** Plain text; escaped when rendered. */
  lines: readonly string[];
}

const style = 'body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}h1{font-size:1.4em}';
// The one inline style is allowed by its hash: no script, no external anything, no form can be posted from the page.
const styleHash = createHash('sha256').update(style).digest('base64');

/** Headers for every callback page: a strict CSP, no caching (the URL carried a code), no referrer, no framing. */
export const callbackPageHeaders: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${styleHash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => entities[char] as string);
}

/** A small self-contained HTML page; every piece of text is escaped. */
export function renderCallbackPage(page: CallbackPage): string {
  const body = page.lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(page.title)}</title><style>${style}</style></head><body><h1>${escapeHtml(page.title)}</h1>${body}</body></html>`;
}

const startAgain = 'Ask your agent to connect again; it will give you a new link.';

/** Every page the callback answers, one per outcome, so a user (and a test) can tell them apart. */
export const pages = {
  connected: (name: string, scopes: readonly string[]): CallbackPage => ({
    status: 200,
    title: `${name} connected`,
    lines: [`${name} is connected. You can close this window.`, `Granted: ${scopes.join(', ') || 'no scopes'}.`],
  }),
  missingState: (): CallbackPage => ({
    status: 400,
    title: 'Connection failed: no state',
    lines: ['This page was opened without the state of a connect flow.', startAgain],
  }),
  unknownState: (): CallbackPage => ({
    status: 400,
    title: 'Connection failed: unknown or used link',
    lines: ['This sign-in link is unknown, or was already used. Nothing was stored.', startAgain],
  }),
  expiredState: (): CallbackPage => ({
    status: 400,
    title: 'Connection failed: link expired',
    lines: ['This sign-in link expired before the provider sent you back. Nothing was stored.', startAgain],
  }),
  providerError: (name: string, error: string): CallbackPage => ({
    status: 400,
    title: 'Connection not made',
    lines: [`${name} answered "${error}" (for example, access was denied). Nothing was stored.`, startAgain],
  }),
  missingCode: (name: string): CallbackPage => ({
    status: 400,
    title: 'Connection failed: no code',
    lines: [`${name} sent you back without an authorization code. Nothing was stored.`, startAgain],
  }),
  codeRefused: (name: string, error: string): CallbackPage => ({
    status: 400,
    title: 'Connection failed: code refused',
    lines: [`${name} refused to exchange the authorization code ("${error}"; a code works once and for minutes only). Nothing was stored.`, startAgain],
  }),
  noRefreshToken: (name: string): CallbackPage => ({
    status: 400,
    title: 'Connection failed: no offline access',
    lines: [`${name} granted access without a refresh token, so the agent could not act later. Nothing was stored.`, startAgain],
  }),
  providerUnavailable: (name: string): CallbackPage => ({
    status: 502,
    title: 'Connection failed: provider unavailable',
    lines: [`${name} could not be reached to finish the connection. Nothing was stored.`, startAgain],
  }),
  notConfigured: (name: string): CallbackPage => ({
    status: 503,
    title: 'Connection failed: not configured',
    lines: [`This service has no OAuth client for ${name}. Nothing was stored.`],
  }),
  failed: (): CallbackPage => ({
    status: 500,
    title: 'Connection failed',
    lines: ['Something went wrong on our side. Nothing was stored.', startAgain],
  }),
};
