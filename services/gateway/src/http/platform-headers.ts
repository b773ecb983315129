import type { IncomingHttpHeaders } from 'node:http';
import { declareRequestHeader, type RouteShape } from '@platform/kit/http/openapi';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Slot, slots } from '../models/model-policy.ts';
import { requireOwnActor } from './gateway-auth.ts';
import { badRequest } from './openai-errors.ts';

/** The spec's request headers, checked. The user's key is kept apart so nothing logs it by accident. */
export interface PlatformHeaders {
  /** The ledger key: a DID as sent, or a 0x wallet address in lower case (one wallet, one ledger row). */
  actor: string;
  slot: Slot;
  intentId: string | null;
  goalId: string | null;
  kindRoute: string | null;
  /** X-Platform-BYO-API-Key: true — forwarded with the caller's key, no whitelist, no metering. */
  byo: boolean;
}

const did = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;
const wallet = /^0x[0-9a-fA-F]{40}$/;
/** Ids for the rollups: 1–128 printable ASCII characters without spaces. */
const rollupId = /^[\x21-\x7e]{1,128}$/;
const userKeyShape = /^[\x21-\x7e]{1,512}$/;

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) throw badRequest('invalid_header', `${name} must be sent once`, name);
  return value === undefined ? undefined : value.trim();
}

function optionalId(headers: IncomingHttpHeaders, name: string): string | null {
  const value = single(headers, name);
  if (value === undefined || value === '') return null;
  if (!rollupId.test(value)) throw badRequest('invalid_header', `${name} must be 1 to 128 printable ASCII characters without spaces`, name);
  return value;
}

/** An actor in the ledger's spelling (DIDs as sent, wallets in lower case), or undefined when malformed. */
export function ledgerActor(value: string): string | undefined {
  if (value.length <= 256 && did.test(value)) return value;
  if (wallet.test(value)) return value.toLowerCase();
  return undefined;
}

export const actorRule = 'a DID (did:<method>:<id>, at most 256 characters) or a 0x wallet address';

function actorOf(headers: IncomingHttpHeaders): string {
  const name = 'x-platform-actor-did';
  const value = single(headers, name);
  if (value === undefined || value === '') throw badRequest('missing_header', `${name} is required: the DID or wallet address the call is metered to`, name);
  const actor = ledgerActor(value);
  if (actor === undefined) throw badRequest('invalid_header', `${name} must be ${actorRule}`, name);
  return actor;
}

function slotOf(headers: IncomingHttpHeaders): Slot {
  const name = 'x-platform-slot';
  const value = single(headers, name);
  if (value === undefined || value === '') throw badRequest('missing_header', `${name} is required: one of ${slots.join(', ')}`, name);
  if (!(slots as readonly string[]).includes(value))
    throw badRequest('invalid_header', `${name} must be one of ${slots.join(', ')}, got "${value.slice(0, 40)}"`, name);
  return value as Slot;
}

function byoOf(headers: IncomingHttpHeaders): boolean {
  const name = 'x-platform-byo-api-key';
  const value = single(headers, name)?.toLowerCase();
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw badRequest('invalid_header', `${name} must be true or false`, name);
}

/** Reads and checks every platform header; a missing or malformed one is a 400 naming it (in `param`). */
export function readPlatformHeaders(headers: IncomingHttpHeaders): PlatformHeaders {
  return {
    actor: actorOf(headers),
    slot: slotOf(headers),
    intentId: optionalId(headers, 'x-platform-intent-id'),
    goalId: optionalId(headers, 'x-platform-goal-id'),
    kindRoute: optionalId(headers, 'x-platform-kind-route'),
    byo: byoOf(headers),
  };
}

/**
 * The caller's own provider key, required with BYO and refused without it (a key sent without BYO would otherwise
 * look used while the call is metered). Never logged, never echoed: messages name the header only.
 */
export function userApiKey(headers: IncomingHttpHeaders, byo: boolean): string | undefined {
  const name = 'x-platform-user-api-key';
  const value = single(headers, name);
  const present = value !== undefined && value !== '';
  if (!byo) {
    if (present) throw badRequest('invalid_header', `${name} is only used with x-platform-byo-api-key: true`, name);
    return undefined;
  }
  if (!present) throw badRequest('missing_header', `${name} is required with x-platform-byo-api-key: true`, name);
  if (!userKeyShape.test(value)) throw badRequest('invalid_header', `${name} must be 1 to 512 printable ASCII characters`, name);
  return value;
}

/** The checked headers of a request, with the user's key apart (undefined unless BYO). */
export interface CallerHeaders {
  platform: PlatformHeaders;
  userKey: string | undefined;
}

const checked = new WeakMap<FastifyRequest, CallerHeaders>();

/**
 * Route hook of the metered routes: checks the platform headers on request, after the bearer and before the body is
 * read, so a call missing its actor or slot costs no body upload.
 */
export async function checkCallerHeaders(request: FastifyRequest): Promise<void> {
  const platform = readPlatformHeaders(request.headers);
  // A daemon's owner token meters only to its own user: nothing is reserved or booked for anyone else.
  requireOwnActor(request, platform.actor);
  checked.set(request, { platform, userKey: userApiKey(request.headers, platform.byo) });
}

export function callerHeadersOf(request: FastifyRequest): CallerHeaders {
  const headers = checked.get(request);
  if (!headers) throw new Error('checkCallerHeaders did not run for this route');
  return headers;
}

const metered = new Set(['/v1/chat/completions', '/v1/embeddings']);
const rollupRule = '1 to 128 printable ASCII characters without spaces';

/**
 * The spec's request headers in the API description: every one a route reads, on the routes that read it. They stay
 * checked here (`readPlatformHeaders`, before the body is read), with the OpenAI-shaped 400 that names the header.
 */
export function declarePlatformHeaders(scope: FastifyInstance): void {
  const on = (urls: string[]) => (route: RouteShape) => urls.includes(route.url);
  declareRequestHeader(
    scope,
    'x-platform-actor-did',
    { description: `The ledger key: ${actorRule}`, required: true, maxLength: 256 },
    (route) => metered.has(route.url) || route.url === '/v1/usage',
  );
  declareRequestHeader(scope, 'x-platform-slot', { description: `The slot: ${slots.join(', ')}`, required: true, maxLength: 16 }, (route) =>
    metered.has(route.url),
  );
  declareRequestHeader(scope, 'x-platform-slot', { description: 'Lists only that slot’s free-tier models', maxLength: 16 }, on(['/v1/models']));
  for (const [name, what] of [
    ['x-platform-intent-id', 'Cost-by-intent rollups'],
    ['x-platform-goal-id', 'Cost-by-goal rollups'],
    ['x-platform-kind-route', 'The executor’s sub-route (reason, code)'],
  ])
    declareRequestHeader(scope, name as string, { description: `${what}: ${rollupRule}`, maxLength: 128 }, (route) => metered.has(route.url));
  declareRequestHeader(scope, 'x-platform-byo-api-key', { description: '`true` forwards with the caller’s own key: no whitelist, no metering' }, (route) =>
    metered.has(route.url),
  );
  declareRequestHeader(
    scope,
    'x-platform-user-api-key',
    { description: 'The caller’s provider key, with x-platform-byo-api-key: true', maxLength: 512 },
    (route) => metered.has(route.url),
  );
}
