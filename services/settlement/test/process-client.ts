import assert from 'node:assert/strict';
import { generateAgentKey } from '@platform/client/agent-key';
import type { TransferView } from '../src/ledger/views.ts';

/** A client of a settlement process over real HTTP (the tests that start the service as its own program). */

export interface Envelope {
  ok: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: each route answers its own data shape.
  data?: any;
  error?: { code: string; message: string; retryable: boolean; [extra: string]: unknown };
}
export interface Reply {
  status: number;
  body: Envelope;
  /** `Retry-After`, when the answer carries it. */
  retryAfter: string | null;
}
export interface Agent {
  did: string;
  token: string;
}

const requestTimeoutMs = 10_000;

/** One HTTP call; rejects on a connection failure or timeout (the caller cannot know what the server did). */
export async function call(base: string, method: 'GET' | 'POST', path: string, options: { token?: string; body?: unknown } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers['x-ledger-agent'] = options.token;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(requestTimeoutMs),
  });
  return { status: response.status, body: (await response.json()) as Envelope, retryAfter: response.headers.get('retry-after') };
}

export const show = (reply: Reply) => `${reply.status} ${JSON.stringify(reply.body)}`;

/** A new agent key through the DID handshake, with its principal token. */
export async function handshake(base: string): Promise<Agent> {
  const key = generateAgentKey();
  const challenge = await call(base, 'POST', '/v1/agent/auth/challenge', { body: { did: key.did } });
  assert.equal(challenge.status, 200, show(challenge));
  const verified = await call(base, 'POST', '/v1/agent/auth/verify', {
    body: { did: key.did, public_key: key.publicKeyHex, nonce: challenge.body.data.nonce, signature: key.sign(challenge.body.data.message) },
  });
  assert.equal(verified.status, 200, show(verified));
  return { did: key.did, token: verified.body.data.token as string };
}

/** Runs `work` over `items`, at most `limit` at a time, in order of start. */
export async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The whole transfer feed, oldest first, read page by page as a client would. */
export async function wholeFeed(base: string, did?: string): Promise<TransferView[]> {
  const feed: TransferView[] = [];
  let before: number | null = null;
  for (let page = 0; page < 1_000; page++) {
    const query = new URLSearchParams({ limit: '200' });
    if (before !== null) query.set('before', String(before));
    if (did !== undefined) query.set('did', did);
    const reply = await call(base, 'GET', `/v1/transfers?${query}`);
    assert.equal(reply.status, 200, show(reply));
    feed.push(...(reply.body.data.transfers as TransferView[]));
    before = reply.body.data.next_before as number | null;
    if (before === null) return feed.reverse();
  }
  throw new Error('the transfer feed did not end within 1000 pages');
}
