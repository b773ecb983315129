import { canonicalDid, parseDid } from '@platform/kit/auth/did';
import type { Clock } from '@platform/kit/clock';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import { decodeIntent, type IntentPurpose, inspectIntent, intentSigningText, verifyIntent } from '@platform/kit/settlement-intent';
import type { FastifyRequest } from 'fastify';
import { type NonceClaim, storable } from '../ledger/commands.ts';

/** Who authorised a movement, and on what terms when it was a signed intent. */
export type Authorisation = { via: 'token'; did: string } | { via: 'intent'; did: string; to: string; micros: bigint; ref: string; nonce: NonceClaim };

/** The verified principal token's DID in the ledger's spelling, or 401. */
export function tokenDid(request: FastifyRequest): string {
  const claims = request.principal;
  if (!claims) throw new ServiceError('unauthorized', 'missing principal token (X-Ledger-Agent header)');
  const parsed = storable(claims.did) ? parseDid(claims.did) : undefined;
  if (!parsed) throw new ServiceError('unauthorized', 'principal token names a malformed DID');
  return canonicalDid(parsed);
}

/** Checks an intent's ed25519 signature somewhere other than the request thread (a worker thread). */
export interface SignatureVerifier {
  verify(publicKeyHex: string, message: string, signatureHex: string): Promise<boolean>;
}

/**
 * A movement is authorised by the `X-Ledger-Agent` token or by a DID-signed settlement intent in the body's
 * `intent` field (kit `settlement-intent.ts`). An intent must carry the purpose of the route; when both are
 * present they must name the same DID. The intent's nonce is consumed by the sequencer in the same
 * transaction as the movement, so a refused movement does not burn it and a replay is refused. With a `verifier`,
 * the signature is checked there: on the sequencer's thread, a batch of holds' verifications (about 0.25 ms each)
 * held up every group's commit behind them.
 */
export async function authorise(
  request: FastifyRequest,
  clock: Clock,
  wire: string | undefined,
  purpose: IntentPurpose,
  verifier?: SignatureVerifier,
): Promise<Authorisation> {
  if (wire === undefined) return { via: 'token', did: tokenDid(request) };
  // The reason tells a service that handed the caller's intent on (the marketplace) that the intent was at fault.
  const refused = (message: string) => new ServiceError('unauthorized', message, { details: { reason: 'intent_invalid' } });
  const decoded = decodeIntent(wire);
  if (!decoded.ok) throw refused(`intent is malformed: ${decoded.reason}`);
  const { signed } = decoded;
  const options = { now: clock.now(), expectedPurpose: purpose };
  const verified = verifier ? inspectIntent(signed, options) : verifyIntent(signed, options);
  if (!verified.ok) throw refused(`intent refused: ${verified.reason}`);
  // The kit checks the DIDs' form only; a label is free text, and the ledger stores both DIDs.
  for (const field of ['from', 'to'] as const)
    if (!storable(verified.intent[field])) throw refused(`intent refused: intent.${field} holds a NUL character or a lone surrogate`);
  if (verifier) {
    // A worker that failed must not fail the movement: the signature is then checked here, as without one.
    const text = intentSigningText(signed.intent);
    const valid = await verifier.verify(signed.public_key, text, signed.signature).catch(() => verifyIntent(signed, options).ok);
    if (!valid) throw refused('intent refused: signature does not verify over the intent');
  }
  const did = canonicalDid(verified.payer);
  if (request.principal) {
    const tokenParsed = parseDid(request.principal.did);
    if (!tokenParsed || canonicalDid(tokenParsed) !== did) throw new ServiceError('forbidden', 'the principal token and the intent name different DIDs');
  }
  return {
    via: 'intent',
    did,
    to: canonicalDid(verified.payee),
    micros: verified.micros,
    ref: verified.intent.ref,
    nonce: { did, nonce: verified.intent.nonce, expiresAt: verified.expiresAt },
  };
}

/** With an intent, a body field that is also given must say the same as the intent. */
export function agreeWithIntent<T>(field: string, fromBody: T | undefined, fromIntent: T): T {
  if (fromBody !== undefined && fromBody !== fromIntent) throw invalidRequest(`${field} differs from the signed intent`, { field });
  return fromIntent;
}
