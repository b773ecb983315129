import type { FastifyRequest } from 'fastify';

/**
 * Developer authentication (filled in by the registry work): an `X-Developer-Token` from Sign-In with Ethereum,
 * or `Authorization: Wallet <signature>` over the canonical request hash. `authenticate` returns the developer's
 * EIP-55 address or throws 401 `unauthorized`.
 */
export interface DeveloperAuth {
  authenticate(request: FastifyRequest): Promise<{ address: string }>;
}

/** The developer authentication of a running service (a stub until the registry work fills it in). */
export function createDeveloperAuth(_deps: { db: unknown; clock: unknown; secret: string; config: unknown }): DeveloperAuth {
  return {
    authenticate: async () => {
      throw new Error('developer authentication is not built yet');
    },
  };
}
