import { buildArtifacts } from '@platform/testkit/contract-checks';
import { startContractEngine } from '@platform/testkit/contract-engine';
import { contracts } from './contract-engine.ts';

/**
 * `npm run build:contracts -w services/settlement`: compiles contracts/src through the platform's contract engine
 * (optimizer on) and writes contracts/artifacts.json, the ABI and bytecode the service deploys and calls. Commit the
 * file with the sources: test/contracts.test.ts fails when it no longer matches them.
 */
const engine = await startContractEngine();
try {
  console.log(await buildArtifacts(contracts, engine));
} finally {
  await engine.stop();
}
