import { ServiceError } from '@platform/kit/errors';
import type { Chains } from '../chains/chains.ts';
import type { ArtifactsRepository } from '../compile/artifacts.repository.ts';
import type { ContractsMetrics } from '../metrics.ts';
import type { Wallets } from '../wallet/wallets.ts';
import type { DeploymentsRepository } from './deployments.repository.ts';
import type { TransactionSender } from './transactions.ts';

/** What simulate, call and deploy work with. */
export interface EvmDeps {
  chains: Chains;
  wallets: Wallets;
  artifacts: ArtifactsRepository;
  deployments: DeploymentsRepository;
  sender: TransactionSender;
  /** Deploys, compiles and test runs are counted here (the tools), deploy gas and spend where a deploy is mined. */
  metrics: ContractsMetrics;
}

/** The header (HTTP and /rpc) carrying the calling agent's DID, whose wallet signs. */
export const callerHeader = 'x-platform-actor-did';

/** The caller's DID, required wherever the wallet signs. */
export function requireCaller(callerDid: string | undefined, what: string): string {
  if (callerDid === undefined) {
    throw new ServiceError('invalid_request', `${what} signs with the caller's wallet: send the caller's DID in X-Platform-Actor-DID`, {
      details: { field: 'X-Platform-Actor-DID' },
    });
  }
  return callerDid;
}
