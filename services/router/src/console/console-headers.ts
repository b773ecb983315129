/**
 * The console's security headers. The page runs only its own scripts and styles (no inline script, no other origin)
 * and talks only to this origin and, for the sign-in's code exchange, the identity provider's token endpoint; it
 * cannot be framed, sends no Referer (the sign-in's code is briefly in its URL), and shares no window with openers.
 */
export function consoleHeaders(connectOrigins: readonly string[]): Record<string, string> {
  const connect = ["'self'", ...new Set(connectOrigins)].join(' ');
  return {
    'content-security-policy': [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      `connect-src ${connect}`,
      "manifest-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
}

/** The origin of a URL, or undefined when it is not one. */
export function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
