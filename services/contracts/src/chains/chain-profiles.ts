import type { ChainSettings } from '../config.ts';

/** A chain the engine can simulate, deploy and call on. */
export interface ChainProfile {
  id: string;
  name: string;
  rpcUrl: string;
  chainId: number;
  explorer: string | null;
  /** Built-in profiles come from settings and cannot be replaced. */
  builtin: boolean;
}

export const mainnetProfileId = 'primary-mainnet';
export const localProfileId = 'local';
export const mainnetChainId = 125;

/** The two preconfigured profiles: the platform's mainnet (chain 125) and the local development chain. */
export function builtinProfiles(settings: ChainSettings): ChainProfile[] {
  return [
    { id: mainnetProfileId, name: 'Primary mainnet', rpcUrl: settings.mainnetRpcUrl, chainId: mainnetChainId, explorer: null, builtin: true },
    { id: localProfileId, name: 'Local development chain', rpcUrl: settings.localRpcUrl, chainId: settings.localChainId, explorer: null, builtin: true },
  ];
}

/**
 * The profile as callers see it (chain_list and chain_register answers). The RPC URL is never shown: hosted RPC
 * URLs usually carry an API key.
 */
export function profileView(profile: ChainProfile) {
  return {
    id: profile.id,
    name: profile.name,
    chain_id: profile.chainId,
    explorer: profile.explorer,
    builtin: profile.builtin,
    rpc_configured: profile.rpcUrl !== '',
  };
}
