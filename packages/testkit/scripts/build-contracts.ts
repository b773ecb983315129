import { buildArtifacts } from '../src/contract-checks.ts';
import { startContractEngine } from '../src/contract-engine.ts';
import { benchContracts } from './bench-contracts.ts';

/**
 * `npm run build:contracts -w packages/testkit`: compiles the benches' contracts (contracts/src: the EIP-3009 token
 * x402 pays in) through the platform's contract engine and writes contracts/artifacts.json. Commit the file with
 * the sources: src/bench-contracts.test.ts fails when it no longer matches them.
 */
const engine = await startContractEngine();
try {
  console.log(await buildArtifacts(benchContracts, engine));
} finally {
  await engine.stop();
}
