import { join } from 'node:path';
import { type ContractEngine, compileArtifacts as compileWith, readContractSources as readFrom, type SourceMap } from '@platform/testkit/contract-engine';

export {
  type ArtifactsFile,
  type ContractEngine,
  engineCall,
  formatArtifacts,
  productionSources,
  type SourceMap,
  startContractEngine,
} from '@platform/testkit/contract-engine';

/** The settlement contracts: what `build-contracts.ts` compiles and `test/contracts.test.ts` checks. */
export const contractsDir = join(import.meta.dirname, '..', 'contracts');
export const artifactsPath = join(contractsDir, 'artifacts.json');
/** The contracts the TypeScript service deploys and calls; artifacts.json holds exactly these. */
export const contractTargets = Object.freeze(['DevReserveToken', 'SettlementVault']);

export const readContractSources = (): SourceMap => readFrom(contractsDir);
export const compileArtifacts = (engine: ContractEngine, sources: SourceMap) => compileWith(engine, sources, contractTargets);
