/**
 * Follows an OAuth authorization URL as a browser would (cookies kept, redirects followed) until the provider sends the
 * browser to `redirectUri`, and answers that URL's query (`code`, `state`, `error`, …). Nothing is ever requested
 * from `redirectUri` itself: the code is read from the redirect, so no listener is needed to receive it.
 *
 * @example const { code, state } = await followAuthorization(`${issuer}/auth?${query}`, redirectUri)
 */
export async function followAuthorization(url: string, redirectUri: string): Promise<Record<string, string>> {
  const cookies = new Map<string, string>();
  let next = url;
  for (let hop = 0; hop < 10; hop++) {
    if (next.startsWith(redirectUri)) return Object.fromEntries(new URL(next).searchParams);
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(10_000) });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get('location');
    await response.arrayBuffer();
    if (!location) throw new Error(`authorization stopped at ${response.status} ${next}`);
    next = new URL(location, next).toString();
  }
  throw new Error('authorization redirected more than 10 times');
}
