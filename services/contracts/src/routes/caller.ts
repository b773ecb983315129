import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import { requireMayActAs } from '@platform/kit/auth/owner-actor';
import { invalidRequest } from '@platform/kit/errors';
import type { FastifyRequest } from 'fastify';
import { callerHeader } from '../evm/engine-deps.ts';

const anyDid = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;

/**
 * The calling agent's DID, whose wallet signs: the daemon forwards it in X-Platform-Actor-DID (the same header
 * the gateway meters by), behind the transport bearer that proves the daemon. Platform DIDs are brought to one
 * spelling so an agent never gets two wallets. Undefined when absent: reads do not need it.
 */
export function callerDidOf(value: string | undefined): string | undefined {
  const did = value?.trim();
  if (did === undefined || did === '') return undefined;
  if (did.length > 256 || !anyDid.test(did))
    throw invalidRequest(`${callerHeader} must be a DID (did:<method>:<id>, at most 256 characters)`, { field: callerHeader });
  const platform = parseDid(did);
  return platform ? canonicalDid(platform) : did;
}

/**
 * The caller of a request, checked against the bearer: a daemon's owner token (ctr1) lets it name only its own
 * user's DIDs, so no daemon signs with another user's wallet (403 before anything is read or signed); the root
 * token (an operator, a standalone deployment) may name any.
 */
export function callerOf(request: FastifyRequest): { callerDid: string | undefined } {
  const header = request.headers[callerHeader];
  if (Array.isArray(header)) throw invalidRequest(`${callerHeader} must be sent once`, { field: callerHeader });
  const callerDid = callerDidOf(header);
  if (callerDid !== undefined) requireMayActAs(request.bearerOwner ?? null, callerDid, callerHeader);
  return { callerDid };
}
