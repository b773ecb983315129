import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import { createPublicClient, http, type PublicClient } from 'viem';
import type { ChainProfile } from './chain-profiles.ts';

const verifiedForMs = 60_000;

/**
 * JSON-RPC access to chain profiles through viem, one client per RPC URL. Before the engine simulates or signs on
 * a profile it checks that the node answers with the profile's chain id (remembered for a minute), so a profile
 * pointing at the wrong network fails loudly instead of sending there.
 */
export class ChainRpc {
  readonly #clients = new Map<string, PublicClient>();
  readonly #verified = new Map<string, number>();
  readonly #timeoutMs: number;
  readonly #clock: Clock;

  constructor(options: { timeoutMs: number; clock: Clock }) {
    this.#timeoutMs = options.timeoutMs;
    this.#clock = options.clock;
  }

  clientFor(rpcUrl: string): PublicClient {
    let client = this.#clients.get(rpcUrl);
    if (!client) {
      client = createPublicClient({ transport: http(rpcUrl, { timeout: this.#timeoutMs, retryCount: 0 }) });
      this.#clients.set(rpcUrl, client);
    }
    return client;
  }

  /** The chain id a node answers with; 503 `rpc_unreachable` when it does not answer. */
  async chainIdAt(rpcUrl: string, subject: string): Promise<number> {
    try {
      return await this.clientFor(rpcUrl).getChainId();
    } catch (error) {
      throw new ServiceError('unavailable', `${subject}: the RPC URL did not answer eth_chainId`, { cause: error, details: { reason: 'rpc_unreachable' } });
    }
  }

  /** A client for a profile whose node is known to serve the profile's chain id. */
  async verifiedClient(profile: ChainProfile): Promise<PublicClient> {
    if (profile.rpcUrl === '') {
      throw new ServiceError('unavailable', `chain ${profile.id} has no RPC URL configured`, { details: { reason: 'rpc_not_configured', chain: profile.id } });
    }
    const key = `${profile.chainId} ${profile.rpcUrl}`;
    const now = this.#clock.now().getTime();
    if ((this.#verified.get(key) ?? 0) <= now) {
      const answered = await this.chainIdAt(profile.rpcUrl, `chain ${profile.id}`);
      if (answered !== profile.chainId) throw chainIdMismatch(profile.id, profile.chainId, answered);
      this.#verified.set(key, now + verifiedForMs);
    }
    return this.clientFor(profile.rpcUrl);
  }
}

export function chainIdMismatch(profileId: string, expected: number, answered: number): ServiceError {
  return new ServiceError('conflict', `chain ${profileId}: the RPC URL serves chain id ${answered}, not ${expected}`, {
    details: { reason: 'chain_id_mismatch', expected, answered },
  });
}
