import { ServiceError } from '../errors.ts';
import { ownerFromLabel, parseDid } from './did.ts';
import { type OwnerTokenScheme, OwnerTokens } from './owner-token.ts';

/**
 * What `request.bearerOwner` holds for the root transport token of a service whose callers name the identity they
 * act as: the operator's (or a standalone deployment's) bearer, which may act as anyone. `@` is outside the owner
 * pattern, so no owner token can name it.
 */
export const anyActor = '@root';

/** The `owners` option of requireTransportBearer for such a service; none when the service is open (empty token). */
export function actorOwners(token: string, scheme: OwnerTokenScheme): { tokens: OwnerTokens; rootOwner: string } | undefined {
  return token === '' ? undefined : { tokens: new OwnerTokens(token, scheme), rootOwner: anyActor };
}

/**
 * Whether a bearer that verified as `bearerOwner` may act as `did`: the root token (and an open service, null) as
 * anyone; an owner token only as a platform DID whose user id is its owner (`did:platform:<owner>:<key>`), compared
 * as the DID parser brings labels to one spelling (a UUID in lowercase).
 */
export function mayActAs(bearerOwner: string | null, did: string): boolean {
  if (bearerOwner === null || bearerOwner === anyActor) return true;
  const parsed = parseDid(did);
  return parsed !== undefined && parsed.owner === ownerFromLabel(bearerOwner);
}

/** Throws 403 `forbidden` when the bearer's owner may not act as `did`; `what` names where the DID came from. */
export function requireMayActAs(bearerOwner: string | null, did: string, what: string): void {
  if (!mayActAs(bearerOwner, did)) throw new ServiceError('forbidden', `${what} is not a DID of the user this bearer was issued to`);
}
