import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type AbiItem, abiSignature, assertArtifactsCurrent, assertSolidityTestsPass } from '@platform/testkit/contract-checks';
import { type ArtifactsFile, type ContractEngine, type SourceMap, startContractEngine } from '@platform/testkit/contract-engine';
import { contracts } from '../scripts/contract-engine.ts';

/** Tests that must exist: a deleted or renamed one is noticed here, not silently dropped. */
const requiredTests = [
  'ServiceRegistryTest.test_register_recordsAndEmits()',
  'ServiceRegistryTest.test_register_byStrangerRefused()',
  'ServiceRegistryTest.test_register_againUpdatesHash()',
  'ServiceRegistryTest.test_register_otherOwnerRefused()',
  'ServiceRegistryTest.test_register_zeroFieldsRefused()',
  'ServiceRegistryTest.test_transferOperator_movesTheRight()',
  'ServiceRegistryTest.testFuzz_register(bytes32,bytes32,address,uint64)',
  'ServiceRegistryTest.testFuzz_register_ownerNeverChanges(address,address,bytes32)',
];

describe('marketplace contracts', () => {
  let engine: ContractEngine;
  let sources: SourceMap;

  before(async () => {
    sources = contracts.readSources();
    engine = await startContractEngine();
  });
  after(async () => engine?.stop());

  test('every Solidity test passes', async () => {
    await assertSolidityTestsPass(engine, sources, requiredTests, 14);
  });

  test('contracts/artifacts.json is what build:contracts makes of the sources', async () => {
    await assertArtifactsCurrent(contracts, engine, sources);
  });

  test("the service's hand-written ABI (src/registry/registry-contract.ts) is the compiled one", async () => {
    // Imported here, not at the top: this file's other checks should still run while that module is being changed.
    const { registryAbi } = (await import('../src/registry/registry-contract.ts')) as { registryAbi: readonly AbiItem[] };
    const committed = JSON.parse(readFileSync(contracts.artifactsPath, 'utf8')) as ArtifactsFile;
    const compiled = (committed.contracts.ServiceRegistry?.abi ?? []) as AbiItem[];
    assert.deepEqual(registryAbi.map(abiSignature).sort(), compiled.map(abiSignature).sort(), 'registryAbi must list exactly what ServiceRegistry compiles to');
  });
});
