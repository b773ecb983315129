import { invalidRequest, ServiceError } from '@platform/kit/errors';
import type { ChainSettings } from '../config.ts';
import type { ChainProfileRow } from '../db/schema.ts';
import { limits } from '../limits.ts';
import { builtinProfiles, type ChainProfile, localProfileId, profileView } from './chain-profiles.ts';
import type { ChainRpc } from './chain-rpc.ts';
import { chainIdMismatch } from './chain-rpc.ts';
import type { ChainsRepository } from './chains.repository.ts';

export interface RegisterChain {
  id: string;
  name: string;
  rpc_url: string;
  chain_id: number;
  explorer?: string | undefined;
}

const profileIdPattern = /^[a-z0-9][a-z0-9-]{0,63}$/;

function fromRow(row: ChainProfileRow): ChainProfile {
  return { id: row.id, name: row.name, rpcUrl: row.rpc_url, chainId: Number(row.chain_id), explorer: row.explorer, builtin: false };
}

function httpUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidRequest(`${field} must be an http or https URL`, { field });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidRequest(`${field} must be an http or https URL`, { field });
  return value;
}

/** Chain profiles: the built-ins from settings, the ones callers registered, and the active choice. */
export class Chains {
  readonly #builtins: ChainProfile[];
  readonly #repository: ChainsRepository;
  readonly #rpc: ChainRpc;

  constructor(options: { settings: ChainSettings; repository: ChainsRepository; rpc: ChainRpc }) {
    this.#builtins = builtinProfiles(options.settings);
    this.#repository = options.repository;
    this.#rpc = options.rpc;
  }

  get rpc(): ChainRpc {
    return this.#rpc;
  }

  async all(): Promise<ChainProfile[]> {
    return [...this.#builtins, ...(await this.#repository.list()).map(fromRow)];
  }

  async list() {
    const active = await this.activeId();
    return { active, chains: (await this.all()).map((profile) => ({ ...profileView(profile), active: profile.id === active })) };
  }

  async activeId(): Promise<string> {
    return (await this.#repository.activeChain()) ?? localProfileId;
  }

  /**
   * A profile by id, or by EVM chain id when the reference is a number (built-ins first, then the oldest
   * registration); the active chain when there is no reference. 404 when nothing matches.
   */
  async resolve(reference: string | undefined): Promise<ChainProfile> {
    const wanted = reference ?? (await this.activeId());
    const all = await this.all();
    const found = /^\d{1,16}$/.test(wanted) ? all.find((profile) => profile.chainId === Number(wanted)) : all.find((profile) => profile.id === wanted);
    if (!found)
      throw new ServiceError('not_found', `unknown chain "${wanted.slice(0, limits.chainIdChars)}": not a profile id or a registered chain id`, {
        details: { chain: wanted.slice(0, limits.chainIdChars) },
      });
    return found;
  }

  /**
   * Registers a profile after asking its RPC URL for the chain id: a node serving another chain is refused (409).
   * Registering the same profile again is a no-op; reusing an id for something else is a 409.
   */
  async register(request: RegisterChain) {
    if (!profileIdPattern.test(request.id))
      throw invalidRequest('id must be 1-64 lowercase letters, digits or dashes, starting with a letter or digit', { field: 'id' });
    if (this.#builtins.some((profile) => profile.id === request.id))
      throw new ServiceError('conflict', `chain ${request.id} is built in and cannot be replaced`, { details: { reason: 'chain_exists' } });
    if (!Number.isSafeInteger(request.chain_id) || request.chain_id < 1) throw invalidRequest('chain_id must be a positive integer', { field: 'chain_id' });
    const rpcUrl = httpUrl('rpc_url', request.rpc_url);
    const explorer = request.explorer === undefined ? null : httpUrl('explorer', request.explorer);
    const answered = await this.#rpc.chainIdAt(rpcUrl, `chain ${request.id}`);
    if (answered !== request.chain_id) throw chainIdMismatch(request.id, request.chain_id, answered);
    const wanted = { id: request.id, name: request.name, rpc_url: rpcUrl, chain_id: request.chain_id, explorer };
    const stored = await this.#repository.insert(wanted);
    if (
      stored.name !== wanted.name ||
      stored.rpc_url !== wanted.rpc_url ||
      Number(stored.chain_id) !== wanted.chain_id ||
      stored.explorer !== wanted.explorer
    ) {
      throw new ServiceError('conflict', `chain ${request.id} is already registered with other settings; register under another id`, {
        details: { reason: 'chain_exists' },
      });
    }
    return { ...profileView(fromRow(stored)), active: (await this.activeId()) === stored.id };
  }

  /** Makes a profile the active chain (kept across restarts). */
  async use(id: string) {
    const profile = await this.resolve(id);
    await this.#repository.setActiveChain(profile.id);
    return { active: profile.id, chain: { ...profileView(profile), active: true } };
  }
}
