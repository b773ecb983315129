import { after, before, describe, test } from 'node:test';
import { benchContracts } from '../scripts/bench-contracts.ts';
import { assertArtifactsCurrent, assertSolidityTestsPass } from './contract-checks.ts';
import { type ContractEngine, type SourceMap, startContractEngine } from './contract-engine.ts';

/** Tests that must exist: a deleted or renamed one is noticed here, not silently dropped. */
const requiredTests = [
  'BenchAuthorizationTokenTest.test_transferWithAuthorization_movesOnceAndEmits()',
  'BenchAuthorizationTokenTest.test_transferWithAuthorization_replayRefused()',
  'BenchAuthorizationTokenTest.test_transferWithAuthorization_bytesSignature()',
  'BenchAuthorizationTokenTest.test_transferWithAuthorization_outsideWindowRefused()',
  'BenchAuthorizationTokenTest.test_cancelAuthorization_spendsTheNonce()',
  'BenchAuthorizationTokenTest.test_receiveWithAuthorization_onlyThePayee()',
];

describe('bench contracts (the EIP-3009 token x402 pays in)', () => {
  let engine: ContractEngine;
  let sources: SourceMap;

  before(async () => {
    sources = benchContracts.readSources();
    engine = await startContractEngine();
  });
  after(async () => engine?.stop());

  test('every Solidity test passes', async () => {
    await assertSolidityTestsPass(engine, sources, requiredTests, 8);
  });

  test('contracts/artifacts.json is what build:contracts makes of the sources', async () => {
    await assertArtifactsCurrent(benchContracts, engine, sources);
  });
});
