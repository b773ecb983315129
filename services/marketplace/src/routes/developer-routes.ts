import { randomBytes } from 'node:crypto';
import { unixSeconds } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { ServiceApp } from '@platform/kit/http/create-app';
import { evmAddress, isoTime } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import { getAddress, isAddress } from 'viem';
import { developmentSecret } from '../config.ts';
import { captureWalletBodies } from '../developers/developer-auth.ts';
import { deriveDeveloperTokenKey, developerTokenLifetimeSeconds, mintDeveloperToken } from '../developers/developer-token.ts';
import { consumeSignInNonce, insertSignInNonce, purgeExpiredDeveloperNonces, touchDeveloper } from '../developers/developers.repository.ts';
import { addressPlaceholder, checkSignIn, type SignInSettings, signInNonceLifetimeSeconds, signInTemplate, signInUri } from '../developers/sign-in.ts';
import { answers } from './responses.ts';
import type { RouteDeps } from './route-deps.ts';

/** Expired sign-in and wallet nonces are swept at most this often, by the nonce route itself (no timer to stop). */
const purgeEveryMs = 60_000;

/**
 * Developer sign-in (EIP-4361): `POST /v1/developers/nonce` hands out a nonce and the message to sign,
 * `POST /v1/developers/auth` exchanges the signed message for an `X-Developer-Token`. The nonce is consumed last,
 * after every check of the message and its signature, so a bad attempt cannot burn someone else's nonce.
 */
export function registerDeveloperRoutes(app: ServiceApp, deps: RouteDeps): void {
  captureWalletBodies(app);
  // The same secret main.ts gives createDeveloperAuth, so the tokens minted here are the ones it accepts.
  const tokenKey = deriveDeveloperTokenKey(deps.config.agentAuthSecret || developmentSecret);
  // The EIP-712 chain id is the platform's chain: the same id quotes and receipts name, known without a node.
  const settings: SignInSettings = { domain: deps.config.siweDomain, chainId: deps.config.eip712ChainId };
  let lastPurge = 0;

  app.post('/v1/developers/nonce', {
    schema: {
      description: 'Start developer sign-in: a single-use nonce and the EIP-4361 message to sign.',
      body: Type.Object(
        { address: Type.Optional(Type.String({ maxLength: 64, description: 'The wallet that will sign: the message comes back filled in' })) },
        { additionalProperties: false },
      ),
      response: {
        200: answers(
          Type.Object({
            nonce: Type.String(),
            message_template: Type.String({ description: 'The EIP-4361 message with the address to fill in' }),
            address_placeholder: Type.String(),
            message: Type.Optional(Type.String({ description: 'The message filled in, when the address was sent' })),
            domain: Type.String(),
            uri: Type.String(),
            chain_id: Type.Integer(),
            issued_at: isoTime(),
            expires_at: isoTime(),
          }),
        ),
      },
    },
    handler: async (request) => {
      const address = request.body.address;
      if (address !== undefined && !isAddress(address, { strict: false }))
        throw new ServiceError('invalid_request', 'address must be a 0x-prefixed 20-byte hex address');
      const now = deps.clock.now();
      if (now.getTime() - lastPurge >= purgeEveryMs) {
        lastPurge = now.getTime();
        await purgeExpiredDeveloperNonces(deps.db, deps.clock);
      }
      const nonce = randomBytes(16).toString('hex');
      const expiresAt = await insertSignInNonce(deps.db, deps.clock, nonce, signInNonceLifetimeSeconds);
      const template = signInTemplate(settings, nonce, now);
      return {
        ok: true as const,
        data: {
          nonce,
          message_template: template,
          address_placeholder: addressPlaceholder,
          ...(address === undefined ? {} : { message: template.replace(addressPlaceholder, getAddress(address)) }),
          domain: settings.domain,
          uri: signInUri(settings.domain),
          chain_id: settings.chainId,
          issued_at: now.toISOString(),
          expires_at: expiresAt.toISOString(),
        },
      };
    },
  });

  app.post('/v1/developers/auth', {
    schema: {
      description: 'Complete developer sign-in with the signed EIP-4361 message; returns the X-Developer-Token.',
      body: Type.Object(
        {
          message: Type.String({ minLength: 1, maxLength: 4096, description: 'The EIP-4361 message, with the address filled in' }),
          signature: Type.String({ maxLength: 200, description: '0x hex personal_sign signature (65 bytes)' }),
        },
        { additionalProperties: false },
      ),
      response: {
        200: answers(
          Type.Object({
            token: Type.String({ description: 'Send as X-Developer-Token' }),
            header: Type.String(),
            address: evmAddress(),
            expires_at: isoTime(),
          }),
        ),
      },
    },
    handler: async (request) => {
      const now = deps.clock.now();
      const check = await checkSignIn(request.body.message, request.body.signature, settings, now);
      if (!check.ok) throw new ServiceError(check.malformed ? 'invalid_request' : 'unauthorized', check.reason);
      if (!(await consumeSignInNonce(deps.db, deps.clock, check.nonce)))
        throw new ServiceError('unauthorized', 'the nonce is unknown, already used or expired; ask POST /v1/developers/nonce for a new one');
      const address = getAddress(check.address);
      await touchDeveloper(deps.db, deps.clock, address);
      const sessionEnd = unixSeconds(now) + developerTokenLifetimeSeconds;
      const expiresAt = check.expiresAt ? Math.min(sessionEnd, Math.floor(check.expiresAt.getTime() / 1000)) : sessionEnd;
      return {
        ok: true as const,
        data: {
          token: mintDeveloperToken(tokenKey, { address, expiresAt }),
          header: 'X-Developer-Token',
          address,
          expires_at: new Date(expiresAt * 1000).toISOString(),
        },
      };
    },
  });
}
