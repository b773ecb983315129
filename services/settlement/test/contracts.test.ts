import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { type AbiItem, abiSignature, assertArtifactsCurrent, assertSolidityTestsPass } from '@platform/testkit/contract-checks';
import { type ArtifactsFile, type ContractEngine, type SourceMap, startContractEngine } from '@platform/testkit/contract-engine';
import { getAddress, keccak256, toBytes } from 'viem';
import { contracts } from '../scripts/contract-engine.ts';

/** Tests that must exist: a deleted or renamed one is noticed here, not silently dropped. */
const requiredTests = [
  'SettlementVaultTest.test_deposit_recordsEmitsAndGrowsReserve()',
  'SettlementVaultTest.test_deposit_refusesFeeOnTransferToken()',
  'SettlementVaultTest.test_anchor_batchOutOfOrderRefused()',
  'SettlementVaultTest.test_anchor_depositsCoveredOutOfRangeRefused()',
  'SettlementVaultTest.test_anchor_rootsOnlyMoveForward()',
  'SettlementVaultTest.test_payout_twiceRefused()',
  'SettlementVaultTest.test_payout_beforeBatchAnchoredRefused()',
  'SettlementVaultTest.test_payout_byStrangerBeforeFreezeRefused()',
  'SettlementVaultTest.test_payout_byAnyoneAfterFreezeAccepted()',
  'SettlementVaultTest.test_freeze_tooEarlyRefused()',
  'SettlementVaultTest.test_freeze_heartbeatRestartsTheClock()',
  'SettlementVaultTest.test_frozen_refusesAnchorHeartbeatAndDeposit()',
  'SettlementVaultTest.test_claim_manyLeafTree()',
  'SettlementVaultTest.test_claim_secondClaimRefused()',
  'SettlementVaultTest.test_claim_zeroPayoutAddressRefused()',
  'SettlementVaultTest.test_refundDeposit_unanchoredRefundedOnce()',
  'SettlementVaultTest.test_refundDeposit_anchoredRefused()',
  'SettlementVaultTest.test_race_unanchoredWithdrawalNeverPaidAfterClaim()',
  'SettlementVaultTest.test_race_anchoredWithdrawalThenClaimPaysExactlyOwed()',
  'SettlementVaultTest.testFuzz_race_paysExactlyWhatWasOwed(uint64,uint64,bool,bool)',
  'SettlementVaultTest.testFuzz_deposit(uint88,bytes32,address)',
  'DevReserveTokenTest.test_mint_byOthersRefused()',
];

describe('settlement contracts', () => {
  let engine: ContractEngine;
  let sources: SourceMap;

  before(async () => {
    sources = contracts.readSources();
    engine = await startContractEngine();
  });
  after(async () => engine?.stop());

  // The interop suite below joins the service's own Solidity tests: one compile and one run for both, since compiling
  // the contracts with forge-std again for it alone was the slowest minute of this file.
  test('every Solidity test passes, with trees and proofs made by @openzeppelin/merkle-tree paying out and claiming in the vault', async () => {
    const withInterop = { ...sources, 'test/StandardTreeInterop.t.sol': interopSuite() };
    await assertSolidityTestsPass(engine, withInterop, [...requiredTests, 'StandardTreeInteropTest.test_standardMerkleTreeProofs()'], 71);
  });

  test('contracts/artifacts.json is what build:contracts makes of the sources', async () => {
    await assertArtifactsCurrent(contracts, engine, sources);
  });

  test("the service's hand-written ABIs (src/chain/vault-contracts.ts) are the compiled ones", async () => {
    // Imported here, not at the top: this file's other checks should still run while that module is being changed.
    const { vaultAbi, tokenAbi } = (await import('../src/chain/vault-contracts.ts')) as { vaultAbi: readonly AbiItem[]; tokenAbi: readonly AbiItem[] };
    const committed = JSON.parse(readFileSync(contracts.artifactsPath, 'utf8')) as ArtifactsFile;
    const compiledVault = (committed.contracts.SettlementVault?.abi ?? []) as AbiItem[];
    const compiledToken = (committed.contracts.DevReserveToken?.abi ?? []) as AbiItem[];
    // Errors OpenZeppelin's code can raise inside the vault. Listing them lets viem name such a revert; leaving them
    // out only makes it an unknown selector, so either is accepted.
    const inherited = new Set(['ReentrancyGuardReentrantCall', 'SafeERC20FailedOperation']);
    const own = (abi: readonly AbiItem[]) =>
      abi
        .filter((item) => !(item.type === 'error' && inherited.has(item.name ?? '')))
        .map(abiSignature)
        .sort();
    assert.deepEqual(own(vaultAbi), own(compiledVault), 'vaultAbi must list exactly what SettlementVault compiles to');
    // The token's ABI is the surface the service uses; the compiled one has more (Ownable, ERC-20 errors).
    const tokenSignatures = new Set(compiledToken.map(abiSignature));
    assert.deepEqual(
      tokenAbi.map(abiSignature).filter((item) => !tokenSignatures.has(item)),
      [],
      'tokenAbi lists items DevReserveToken does not have',
    );
  });
});

/**
 * A Solidity test generated from trees that `@openzeppelin/merkle-tree` builds with the leaf types the service
 * uses: the vault must accept every proof the package gives (the package lays its tree out differently from the
 * Solidity tests' builder, so this is the check that the two agree on more than hashing).
 */
function interopSuite(): string {
  const types = ['bytes32', 'bytes32', 'address', 'uint256'];
  const balanceTag = keccak256(toBytes('platform.settlement.balance.v2'));
  const withdrawalTag = keccak256(toBytes('platform.settlement.withdrawal.v1'));
  const payee = (i: number) => getAddress(`0x${(0xbeef0000 + i).toString(16).padStart(40, '0')}`);
  const balances = Array.from({ length: 5 }, (_, i) => [
    balanceTag,
    keccak256(toBytes(`did:platform:agent${i}:0123456789abcd0${i}`)),
    payee(i),
    `${1_000_000 * (i + 1)}`,
  ]);
  const withdrawals = Array.from({ length: 3 }, (_, i) => [withdrawalTag, keccak256(toBytes(`withdrawal-${i}`)), payee(10 + i), `${250_000 * (i + 1)}`]);
  const balanceTree = StandardMerkleTree.of(balances, types);
  const withdrawalTree = StandardMerkleTree.of(withdrawals, types);
  const total = [...balances, ...withdrawals].reduce((sum, leaf) => sum + BigInt(leaf[3] as string), 0n);
  // Each call in a block of its own, with its proof copied into a dynamic array from 32-byte hex literals.
  const call = (statement: string, hashes: string[]) =>
    [
      '        {',
      `            bytes32[] memory proof = new bytes32[](${hashes.length});`,
      ...hashes.map((hash, i) => `            proof[${i}] = ${hash};`),
      `            ${statement}`,
      '        }',
    ].join('\n');
  const payouts = withdrawals.map(([, id, to, amount], i) => call(`vault.payout(${id}, ${to}, ${amount}, 1, proof);`, withdrawalTree.getProof(i)));
  const claims = balances.map(([, account, to, amount], i) => call(`vault.claim(${account}, ${to}, ${amount}, proof);`, balanceTree.getProof(i)));
  const received = [...balances, ...withdrawals].map(([, , to, amount]) => `        assertEq(token.balanceOf(${to}), ${amount});`);
  return `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Test} from "forge-std/Test.sol";
import {DevReserveToken} from "../src/DevReserveToken.sol";
import {SettlementVault} from "../src/SettlementVault.sol";

contract StandardTreeInteropTest is Test {
    function test_standardMerkleTreeProofs() public {
        address sequencer = makeAddr("sequencer");
        DevReserveToken token = new DevReserveToken(address(this));
        SettlementVault vault = new SettlementVault(token, sequencer, 1 days);
        assertEq(vault.BALANCE_TAG(), ${balanceTag});
        assertEq(vault.WITHDRAWAL_TAG(), ${withdrawalTag});
        token.mint(address(this), ${total});
        token.approve(address(vault), ${total});
        vault.deposit(${total}, bytes32(0));
        vm.prank(sequencer);
        vault.anchor(1, ${balanceTree.root}, keccak256("log"), 1, ${withdrawalTree.root}, 1);
        vm.startPrank(sequencer);
${payouts.join('\n')}
        vm.stopPrank();
        vm.warp(block.timestamp + 1 days);
        vault.freeze();
${claims.join('\n')}
${received.join('\n')}
        assertEq(vault.reserve(), 0);
    }
}
`;
}
