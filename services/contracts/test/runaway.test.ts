import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { createToolchain, type Toolchain } from '../src/toolchain.ts';
import { forgeProject } from './fixtures/forge-project.ts';
import { minimalTests } from './fixtures/minimal-test.ts';
import { type Contracts, startContracts } from './harness.ts';

const spinning = {
  'test/Spin.t.sol': `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract SpinTest {
    function test_spins_forever() public pure {
        uint256 i;
        while (true) { i++; }
    }
}
`,
};

// Neither engine kind matters here: these limits live in the toolchain.
const [engine] = testEngines();

describe('runaway work is stopped and the engine carries on', () => {
  let toolchain: Toolchain;
  let c: Contracts;
  before(async () => {
    toolchain = createToolchain({ compilerThreads: 1, compileTimeoutMs: 1_500, compileCacheEntries: 4, testTimeoutMs: 1_500, fuzzRuns: 8 }, silentLogger);
    c = await startContracts(engine!, { toolchain });
  });
  after(async () => {
    await c.close();
    await toolchain.close();
  });

  test('a test that never ends is stopped at the time limit (503 test_timeout); the next run works', async () => {
    const stuck = await c.call('POST', '/v1/test', { body: { sources: spinning } });
    assert.equal(stuck.status, 503);
    assert.equal(stuck.body.error?.reason, 'test_timeout');
    assert.equal(stuck.body.error?.retryable, false, 'running it again would time out again');
    const next = await c.call('POST', '/v1/test', { body: { sources: minimalTests } });
    assert.equal(next.status, 200);
    assert.equal(next.body.data.summary.passed, 2);
  });

  test('a compile over the time limit is 503 compile_timeout; the replaced solc thread compiles the next one', async () => {
    const slow = await c.call('POST', '/v1/compile', { body: { sources: forgeProject } });
    assert.equal(slow.status, 503);
    assert.equal(slow.body.error?.reason, 'compile_timeout');
    const next = await c.call('POST', '/v1/compile', { body: { sources: minimalTests } });
    assert.equal(next.status, 200);
    assert.equal(next.body.data.success, true);
  });
});
