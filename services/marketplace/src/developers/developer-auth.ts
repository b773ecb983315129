import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pipeline, Transform } from 'node:stream';
import { type Clock, unixSeconds } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { MarketplaceSchema } from '../db/schema.ts';
import { deriveDeveloperTokenKey, verifyDeveloperToken } from './developer-token.ts';
import { claimWalletNonce, purgeExpiredDeveloperNonces, touchDeveloper } from './developers.repository.ts';
import { checkWalletRequest, emptyBodyDigest, walletClockSkewSeconds } from './wallet-request.ts';

/**
 * Developer authentication: an `X-Developer-Token` from Sign-In with Ethereum, or `Authorization: Wallet
 * <signature>` over the canonical request (wallet-request.ts). `authenticate` returns the developer's EIP-55
 * address or throws 401 `unauthorized`. When both are sent the token is checked and the wallet headers ignored.
 */
export interface DeveloperAuth {
  authenticate(request: FastifyRequest): Promise<{ address: string }>;
}

export interface DeveloperAuthDeps {
  db: Kysely<MarketplaceSchema>;
  clock: Clock;
  /** The service secret; developer tokens use a key derived from it under their own label. */
  secret: string;
  config: unknown;
}

/** Body digests of requests signed with `Authorization: Wallet`, filled while Fastify reads the body. */
const bodyDigests = new WeakMap<IncomingMessage, { digest: string | undefined }>();

const isWallet = (request: FastifyRequest) => /^Wallet\s/i.test(request.headers.authorization ?? '');

/**
 * Hashes the exact body bytes of wallet-signed requests as they stream past the JSON parser (the parsed body has
 * lost its spelling). Installed once on the root app, before any route; other requests are left alone.
 */
export function captureWalletBodies(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (!isWallet(request)) return payload;
    const hash = createHash('sha256');
    const state: { digest: string | undefined } = { digest: undefined };
    bodyDigests.set(request.raw, state);
    const tee = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
      flush(done) {
        state.digest = hash.digest('hex');
        done();
      },
    });
    // pipeline destroys the tee when the client aborts, so the parser fails instead of waiting forever.
    return pipeline(payload, tee, () => {});
  });
}

/** The SHA-256 of what the request carried; undefined when a body was sent but not read through the hook. */
function digestOf(request: FastifyRequest): string | undefined {
  const seen = bodyDigests.get(request.raw)?.digest;
  if (seen !== undefined) return seen;
  const length = request.headers['content-length'];
  const bodiless = request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
  return bodiless ? emptyBodyDigest : undefined;
}

const unauthorized = (message: string) => new ServiceError('unauthorized', message);

/** Expired wallet and sign-in nonces are swept at most this often, by the requests themselves (no timer to stop). */
const purgeEveryMs = 60_000;

export function createDeveloperAuth(deps: DeveloperAuthDeps): DeveloperAuth {
  const key = deriveDeveloperTokenKey(deps.secret);
  let lastPurge = 0;
  return {
    async authenticate(request) {
      const token = request.headers['x-developer-token'];
      if (typeof token === 'string' && token.trim() !== '') {
        const check = verifyDeveloperToken(key, token.trim(), unixSeconds(deps.clock.now()));
        if (!check.ok) throw unauthorized(`invalid developer token: ${check.reason}`);
        return { address: check.address };
      }
      if (!isWallet(request))
        throw unauthorized('developer credentials required: X-Developer-Token (from POST /v1/developers/auth) or Authorization: Wallet <signature>');
      const bodySha256 = digestOf(request);
      if (bodySha256 === undefined) throw unauthorized('the request body could not be hashed for the wallet signature check');
      const now = unixSeconds(deps.clock.now());
      const check = await checkWalletRequest(request.headers, { method: request.method, pathWithQuery: request.raw.url ?? request.url, bodySha256 }, now);
      if (!check.ok) throw unauthorized(check.reason);
      // Kept until the timestamp leaves the window: after that the timestamp check refuses a replay on its own.
      const expiresAt = new Date((check.timestamp + walletClockSkewSeconds + 1) * 1000);
      if (!(await claimWalletNonce(deps.db, deps.clock, { address: check.address, nonce: check.nonce, expiresAt })))
        throw unauthorized('X-Wallet-Nonce was already used by this wallet; sign the request again with a new nonce');
      await touchDeveloper(deps.db, deps.clock, check.address);
      if (now * 1000 - lastPurge >= purgeEveryMs) {
        lastPurge = now * 1000;
        await purgeExpiredDeveloperNonces(deps.db, deps.clock);
      }
      return { address: check.address };
    },
  };
}
