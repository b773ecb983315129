import { Type } from 'typebox';
import { parseDid } from '../auth/did.ts';
import type { HandshakeDeps } from '../auth/handshake.ts';
import { issueChallenge, verifyChallenge } from '../auth/handshake.ts';
import { requireMayActAs } from '../auth/owner-actor.ts';
import { okSchema } from '../envelope.ts';
import { ServiceError } from '../errors.ts';
import type { ServiceApp } from './create-app.ts';

const Text = (description: string) => Type.String({ maxLength: 512, description });

/**
 * The agent DID handshake: `POST /v1/agent/auth/challenge` and `POST /v1/agent/auth/verify`.
 * Both sit behind the transport bearer. Behind an owner token (the bearer's `owners` option), only a DID of the
 * token's owner gets a challenge or a principal token (403 otherwise, before a nonce is issued or consumed): the
 * handshake proves the key, the owner token proves the user.
 */
export function registerHandshakeRoutes(app: ServiceApp, deps: HandshakeDeps): void {
  app.post('/v1/agent/auth/challenge', {
    schema: {
      description: 'Issue a single-use nonce for the DID to sign.',
      body: Type.Object({ did: Text('Agent DID, did:platform:<label>:<16 hex>') }, { additionalProperties: false }),
      response: {
        200: okSchema(Type.Object({ did: Type.String(), nonce: Type.String(), message: Type.String(), expires_in: Type.Integer() })),
      },
    },
    handler: async (request) => {
      if (parseDid(request.body.did)) requireMayActAs(request.bearerOwner ?? null, request.body.did, 'did');
      const result = await issueChallenge(deps, request.body.did);
      if (!result.ok) throw new ServiceError('invalid_request', 'did is malformed: expected did:platform:<label>:<16 hex characters>');
      return { ok: true as const, data: result.challenge };
    },
  });

  app.post('/v1/agent/auth/verify', {
    schema: {
      description: 'Exchange a signed challenge for a principal token.',
      body: Type.Object(
        {
          did: Text('The DID the challenge was issued for'),
          public_key: Text('Hex of the 32-byte ed25519 public key'),
          nonce: Text('The nonce from the challenge'),
          signature: Text('Hex ed25519 signature over the challenge message'),
        },
        { additionalProperties: false },
      ),
      response: { 200: okSchema(Type.Object({ token: Type.String(), owner_user_id: Type.String(), expires_in: Type.Integer() })) },
    },
    handler: async (request) => {
      if (parseDid(request.body.did)) requireMayActAs(request.bearerOwner ?? null, request.body.did, 'did');
      const result = await verifyChallenge(deps, request.body);
      if (result.ok) return { ok: true as const, data: result.session };
      throw new ServiceError(result.error === 'invalid_did' ? 'invalid_request' : 'unauthorized', result.reason);
    },
  });
}
