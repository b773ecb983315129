import type { Clock } from '@platform/kit/clock';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { ChainRpc } from './chains/chain-rpc.ts';
import { ChainsRepository } from './chains/chains.repository.ts';
import { Chains } from './chains/chains.ts';
import { ArtifactsRepository } from './compile/artifacts.repository.ts';
import type { ChainSettings, CustodyPolicy } from './config.ts';
import type { ContractsSchema } from './db/schema.ts';
import { DeploymentsRepository } from './evm/deployments.repository.ts';
import type { EvmDeps } from './evm/engine-deps.ts';
import { TransactionSender } from './evm/transactions.ts';
import { type ContractsMetrics, contractsMetrics } from './metrics.ts';
import type { Toolchain } from './toolchain.ts';
import { Custody } from './wallet/custody.ts';
import { KeyVault } from './wallet/key-vault.ts';
import { WalletsRepository } from './wallet/wallets.repository.ts';
import { Wallets } from './wallet/wallets.ts';

export interface EngineOptions {
  db: Kysely<ContractsSchema>;
  clock: Clock;
  logger: Logger;
  toolchain: Toolchain;
  chains: ChainSettings;
  policy: CustodyPolicy;
  walletKeyHex: string;
  /** The service's domain metrics (main.ts makes them on the service's registry); absent, counted on a registry no one serves. */
  metrics?: ContractsMetrics;
}

/** The engine every front door calls: toolchain, chains, wallets and the records behind them. */
export interface Engine extends EvmDeps {
  toolchain: Toolchain;
}

export function createEngine(options: EngineOptions): Engine {
  const rpc = new ChainRpc({ timeoutMs: options.chains.rpcTimeoutMs, clock: options.clock });
  const walletsRepository = new WalletsRepository(options.db, options.clock);
  const custody = new Custody({ policy: options.policy, repository: walletsRepository });
  return {
    toolchain: options.toolchain,
    artifacts: new ArtifactsRepository(options.db, options.clock),
    chains: new Chains({ settings: options.chains, repository: new ChainsRepository(options.db, options.clock), rpc }),
    wallets: new Wallets({ repository: walletsRepository, vault: new KeyVault(options.walletKeyHex) }),
    deployments: new DeploymentsRepository(options.db, options.clock),
    sender: new TransactionSender({ rpc, custody, settings: options.chains, logger: options.logger }),
    metrics: options.metrics ?? contractsMetrics(createServiceMetrics('contracts')),
  };
}
