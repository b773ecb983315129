import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { forgeProject } from './fixtures/forge-project.ts';
import { broken } from './fixtures/projects.ts';
import { type Contracts, closeSharedToolchain, startContracts } from './harness.ts';

// The test runner reads no database, so one engine is enough here.
const [engine] = testEngines();
after(() => closeSharedToolchain());

interface TestCase {
  contract: string;
  name: string;
  status: string;
  reason: string | null;
  gas: { kind: string; gas?: number; runs?: number; mean_gas?: number; median_gas?: number };
  logs: string[];
  trace: string[] | null;
  location: { file: string; line: number; function: string | null } | null;
}

describe('Solidity tests through EDR', () => {
  let c: Contracts;
  let all: { summary: Record<string, number>; tests: TestCase[]; success: boolean; compiled: boolean };
  const byName = (name: string) => all.tests.find((entry) => entry.name.startsWith(name)) as TestCase;

  before(async () => {
    // A secret in this process's environment must not reach a test through vm.envOr.
    process.env.CONTRACTS_WALLET_KEY = 'a-secret-the-tests-must-not-see';
    c = await startContracts(engine!);
    const response = await c.call('POST', '/v1/test', { body: { sources: forgeProject } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    all = response.body.data;
  });
  after(() => c.close());

  test('every test of every suite runs, with a summary', () => {
    assert.equal(all.compiled, true);
    assert.deepEqual(all.summary, { suites: 2, passed: 6, failed: 2, skipped: 0 });
    assert.equal(all.success, false);
  });

  test('cheatcodes work: prank, deal, expectEmit, expectRevert, warp, roll, label, assume', () => {
    for (const name of ['test_deposit_emits', 'test_withdraw_locked_reverts', 'test_withdraw_after_warp_and_roll', 'testFuzz_deposit']) {
      assert.equal(byName(name).status, 'passed', `${name}: ${byName(name).reason}`);
    }
  });

  test('a passing unit test reports its gas and console.log output', () => {
    const warped = byName('test_withdraw_after_warp_and_roll');
    assert.equal(warped.gas.kind, 'unit');
    assert.ok((warped.gas.gas ?? 0) > 21_000);
    assert.deepEqual(warped.logs, ['alice balance 9000000000000000000']);
    assert.equal(warped.trace, null, 'passing tests carry no trace');
  });

  test('a fuzz test reports runs and mean and median gas', () => {
    const fuzz = byName('testFuzz_deposit');
    assert.equal(fuzz.name, 'testFuzz_deposit(uint96)');
    assert.equal(fuzz.gas.kind, 'fuzz');
    assert.equal(fuzz.gas.runs, 64);
    assert.ok((fuzz.gas.mean_gas ?? 0) > 0 && (fuzz.gas.median_gas ?? 0) > 0);
  });

  test('a failed assertion gives its message, the failing line and a trace', () => {
    const failed = byName('test_fails_assertion');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.reason, 'balance mismatch: 1000000000000000000 != 2000000000000000000');
    assert.deepEqual(failed.location, { file: 'test/Vault.t.sol', line: 53, contract: 'VaultTest', function: 'test_fails_assertion' });
    assert.ok(failed.trace?.some((line) => line.includes('VaultTest::test_fails_assertion()')));
    assert.ok(
      failed.trace?.some((line) => line.includes('TheVault::deposit()')),
      'labels name addresses in the trace',
    );
  });

  test('a revert with a custom error is decoded in the reason and the trace', () => {
    const failed = byName('test_fails_with_custom_error');
    assert.equal(failed.status, 'failed');
    assert.match(failed.reason ?? '', /^InsufficientBalance\(5, 0\)$/);
    assert.ok(failed.trace?.some((line) => line.includes('[Revert] InsufficientBalance(5, 0)')));
  });

  test("tests cannot read the engine's environment", () => {
    assert.deepEqual(byName('test_environment_is_empty').logs, ['unset']);
  });

  test('match_path, match_contract and filter narrow the run', async () => {
    const run = async (filters: Record<string, string>) => (await c.call('POST', '/v1/test', { body: { sources: forgeProject, ...filters } })).body.data;
    const byPath = await run({ match_path: 'test/other/*.t.sol' });
    assert.deepEqual(
      byPath.tests.map((entry: TestCase) => entry.name),
      ['test_arithmetic()'],
    );
    const byContract = await run({ match_contract: '^Vault' });
    assert.equal(byContract.summary.suites, 1);
    assert.equal(byContract.tests.length, 7);
    const byFilter = await run({ filter: 'warp|locked' });
    assert.deepEqual(byFilter.tests.map((entry: TestCase) => entry.name).sort(), ['test_withdraw_after_warp_and_roll()', 'test_withdraw_locked_reverts()']);
    assert.equal(byFilter.success, true);
    const recursive = await run({ match_path: 'test/**/*.t.sol', match_contract: 'Other' });
    assert.equal(recursive.tests.length, 1);
  });

  test('a project that does not compile answers with diagnostics and no tests', async () => {
    const response = await c.call('POST', '/v1/test', { body: { sources: broken } });
    assert.equal(response.status, 200);
    assert.equal(response.body.data.compiled, false);
    assert.equal(response.body.data.success, false);
    assert.deepEqual(response.body.data.tests, []);
    assert.equal(response.body.data.diagnostics[0].line, 5);
  });

  test('bad filters are 400 naming the field', async () => {
    for (const [field, value] of [
      ['filter', '(unclosed'],
      ['match_contract', '[z-a]'],
    ]) {
      const response = await c.call('POST', '/v1/test', { body: { sources: forgeProject, [field as string]: value } });
      assert.equal(response.status, 400);
      assert.match(response.body.error?.message ?? '', new RegExp(field as string));
    }
  });
});
