import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { tracedFetch } from '@platform/kit/observability/tracing';
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Logger } from 'pino';
import type { IdentityProviderSettings } from '../config.ts';

/** Where a browser signs in (the console): the provider's authorization and token endpoints, from its discovery document. */
export interface ProviderEndpoints {
  authorization: string;
  token: string;
}

export type Verified = { ok: true; userId: string; expiresAt: number } | { ok: false; reason: string };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An unknown `kid` refetches the JWKS (the provider rotated its keys), but not more often than this. */
const refetchCooldownMs = 10_000;
const cacheSize = 10_000;

const reasons: Readonly<Record<string, string>> = {
  ERR_JWT_EXPIRED: 'the token has expired',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'the signature does not verify',
  ERR_JOSE_ALG_NOT_ALLOWED: 'the signing algorithm is not allowed',
  ERR_JWKS_NO_MATCHING_KEY: 'the token is signed with a key the identity provider does not publish',
  ERR_JWS_INVALID: 'the token is malformed',
  ERR_JWT_INVALID: 'the token is malformed',
};

/**
 * Verifies identity-provider JWTs with `jose`: keys from the provider's OpenID discovery document and JWKS (fetched on
 * first use, fetched again when a token names a key id not yet seen, at most every 10 s), the issuer (configured, else
 * the discovered one) and the audience checked, only the configured asymmetric algorithms (never `none`, never HMAC),
 * expiry with a small leeway, on the injected clock. The user is the `sub` claim, which must be a UUID. Verified
 * tokens are remembered until they expire, so a client sending the same token does not pay for the signature again.
 */
export class JwtVerifier {
  readonly #settings: IdentityProviderSettings;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #verified = new Map<string, { userId: string; expiresAt: number }>();
  #issuer: string | undefined;
  #jwksUri: string | undefined;
  #endpoints: ProviderEndpoints | undefined;
  #keys: JWTVerifyGetKey | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;

  constructor(settings: IdentityProviderSettings, clock: Clock, logger: Logger) {
    this.#settings = settings;
    this.#clock = clock;
    this.#logger = logger;
  }

  async verify(token: string): Promise<Verified> {
    const now = this.#clock.now().getTime();
    const known = this.#verified.get(token);
    if (known !== undefined && known.expiresAt * 1000 + this.#settings.leewaySeconds * 1000 > now) return { ok: true, ...known };
    await this.#discover();
    try {
      const { payload } = await jwtVerify(token, (header, jws) => this.#key(header, jws), {
        issuer: this.#issuer as string,
        audience: this.#settings.audience,
        algorithms: [...this.#settings.algorithms],
        clockTolerance: this.#settings.leewaySeconds,
        currentDate: new Date(now),
        requiredClaims: ['exp', 'sub'],
      });
      if (typeof payload.sub !== 'string' || !uuid.test(payload.sub)) return { ok: false, reason: "the token's subject (sub) is not a user id (a UUID)" };
      const verified = { userId: payload.sub.toLowerCase(), expiresAt: payload.exp as number };
      if (this.#verified.size >= cacheSize) this.#verified.delete(this.#verified.keys().next().value as string);
      this.#verified.set(token, verified);
      return { ok: true, ...verified };
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      if (error instanceof ServiceError) throw error;
      if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED')
        return { ok: false, reason: `the token's ${(error as { claim?: string }).claim ?? 'claims'} claim is not accepted` };
      return { ok: false, reason: reasons[code] ?? 'the token is not valid' };
    }
  }

  /** The provider's sign-in endpoints (discovered once, with its keys). Throws 503 `unavailable` when it cannot be reached. */
  async endpoints(): Promise<ProviderEndpoints | undefined> {
    await this.#discover();
    return this.#endpoints;
  }

  async #key(...args: Parameters<JWTVerifyGetKey>) {
    try {
      return await (this.#keys as JWTVerifyGetKey)(...args);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || this.#clock.now().getTime() - this.#fetchedAt < refetchCooldownMs) throw error;
      await this.#fetchKeys();
      return (this.#keys as JWTVerifyGetKey)(...args);
    }
  }

  async #discover(): Promise<void> {
    if (this.#keys !== undefined) return;
    try {
      const response = await tracedFetch(`${this.#settings.url}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5_000) });
      if (!response.ok) throw new Error(`discovery answered ${response.status}`);
      const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown; authorization_endpoint?: unknown; token_endpoint?: unknown };
      if (typeof document.jwks_uri !== 'string' || typeof document.issuer !== 'string') throw new Error('the discovery document has no issuer or jwks_uri');
      if (typeof document.authorization_endpoint === 'string' && typeof document.token_endpoint === 'string')
        this.#endpoints = { authorization: document.authorization_endpoint, token: document.token_endpoint };
      this.#issuer = this.#settings.issuer ?? document.issuer;
      this.#jwksUri = document.jwks_uri;
      await this.#fetchKeys();
    } catch (error) {
      this.#logger.warn({ err: error }, 'identity provider unreachable');
      throw new ServiceError('unavailable', 'the identity provider cannot be reached to check the token; retry shortly', {
        cause: error,
        details: { retry_after: 2 },
      });
    }
  }

  async #fetchKeys(): Promise<void> {
    const response = await tracedFetch(this.#jwksUri as string, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) throw new Error(`the JWKS answered ${response.status}`);
    this.#keys = createLocalJWKSet((await response.json()) as JSONWebKeySet);
    this.#fetchedAt = this.#clock.now().getTime();
  }
}
