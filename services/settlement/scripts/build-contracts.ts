import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { artifactsPath, compileArtifacts, formatArtifacts, readContractSources, startContractEngine } from './contract-engine.ts';

/**
 * `npm run build:contracts -w services/settlement`: compiles contracts/src through the platform's contract engine
 * (solc 0.8.37, optimizer on) and writes contracts/artifacts.json, the ABI and bytecode the service deploys and
 * calls. Commit the file with the sources: test/contracts.test.ts fails when it no longer matches them.
 */
const engine = await startContractEngine();
try {
  const artifacts = await compileArtifacts(engine, readContractSources());
  writeFileSync(artifactsPath, formatArtifacts(artifacts));
  const sizes = Object.entries(artifacts.contracts).map(([name, { bytecode }]) => `${name} ${(bytecode.length - 2) / 2} bytes`);
  console.log(`wrote ${relative(process.cwd(), artifactsPath)} (${artifacts.compiler.version}; ${sizes.join(', ')}; sources ${artifacts.sources_sha256})`);
} finally {
  await engine.stop();
}
