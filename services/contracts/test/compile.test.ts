import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { broken, counter, token, unknownImport } from './fixtures/projects.ts';
import { type Contracts, closeSharedToolchain, startContracts } from './harness.ts';

after(() => closeSharedToolchain());

for (const engine of testEngines()) {
  describe(`compile on ${engine.name}`, () => {
    let c: Contracts;
    before(async () => {
      c = await startContracts(engine);
    });
    after(() => c.close());

    describe('happy path', () => {
      test('returns ABI and bytecode per contract, a deterministic project_id and no diagnostics', async () => {
        const response = await c.call('POST', '/v1/compile', { body: { sources: counter } });
        assert.equal(response.status, 200);
        const data = response.body.data;
        assert.equal(data.success, true);
        assert.match(data.project_id, /^p-[0-9a-f]{32}$/);
        assert.deepEqual(data.diagnostics, []);
        assert.deepEqual(
          data.artifacts.map((artifact: { name: string; source: string }) => `${artifact.source}:${artifact.name}`),
          ['src/Counter.sol:Counter'],
        );
        const [artifact] = data.artifacts;
        assert.ok(artifact.abi.some((entry: { name?: string }) => entry.name === 'increment'));
        assert.match(artifact.bytecode, /^0x60[0-9a-f]+$/);
        assert.match(artifact.deployed_bytecode, /^0x60[0-9a-f]+$/);
        assert.deepEqual(data.compiler, { version: '0.8.37', optimize: false, via_ir: false });
      });

      test('the same sources compile again from the cache, under the same project_id', async () => {
        // The toolchain is shared by both engines' runs of this file: these sources are this run's own.
        const sources = { 'src/Counter.sol': `${counter['src/Counter.sol']}// ${engine.name}\n` };
        const first = await c.call('POST', '/v1/compile', { body: { sources } });
        assert.equal(first.body.data.cached, false);
        const again = await c.call('POST', '/v1/compile', { body: { sources: { ...sources } } });
        assert.equal(again.body.data.cached, true);
        assert.equal(again.body.data.project_id, first.body.data.project_id);
        assert.ok(again.body.data.duration_ms < 1000, `a cached compile took ${again.body.data.duration_ms} ms`);
        const optimized = await c.call('POST', '/v1/compile', { body: { sources, optimize: true } });
        assert.equal(optimized.body.data.cached, false, 'other settings are another build');
        assert.notEqual(optimized.body.data.artifacts[0].bytecode, first.body.data.artifacts[0].bytecode);
      });

      test('via_ir compiles through the IR pipeline: its own build, other bytecode, and the setting reported', async () => {
        const sources = { 'src/Counter.sol': `${counter['src/Counter.sol']}// via-ir ${engine.name}\n` };
        const legacy = await c.call('POST', '/v1/compile', { body: { sources, optimize: true } });
        const viaIr = await c.call('POST', '/v1/compile', { body: { sources, optimize: true, via_ir: true } });
        assert.equal(viaIr.status, 200);
        assert.equal(viaIr.body.data.success, true, JSON.stringify(viaIr.body.data.diagnostics));
        assert.deepEqual(viaIr.body.data.compiler, { version: '0.8.37', optimize: true, via_ir: true });
        assert.equal(viaIr.body.data.cached, false, 'via_ir is part of the build key');
        assert.notEqual(viaIr.body.data.artifacts[0].bytecode, legacy.body.data.artifacts[0].bytecode);
      });

      test('OpenZeppelin imports resolve from npm; targets can name a library contract', async () => {
        const response = await c.call('POST', '/v1/compile', {
          body: { sources: token, targets: ['Token', '@openzeppelin/contracts/token/ERC20/ERC20.sol:ERC20'] },
        });
        assert.equal(response.body.data.success, true, JSON.stringify(response.body.data.diagnostics));
        const [own, library] = response.body.data.artifacts;
        assert.equal(own.name, 'Token');
        assert.equal(library.source, '@openzeppelin/contracts/token/ERC20/ERC20.sol');
        assert.equal(library.bytecode, '0x', 'an abstract contract has no creation code');
      });

      test('artifacts are stored under the project id and fetched by name', async () => {
        const compiled = await c.call('POST', '/v1/compile', { body: { sources: counter, project_id: 'counter-app' } });
        assert.equal(compiled.body.data.project_id, 'counter-app');
        const fetched = await c.call('GET', '/v1/artifacts/Counter?project_id=counter-app');
        assert.equal(fetched.status, 200);
        assert.equal(fetched.body.data.bytecode, compiled.body.data.artifacts[0].bytecode);
        assert.deepEqual(fetched.body.data.abi, compiled.body.data.artifacts[0].abi);
        const qualified = await c.call('GET', `/v1/artifacts/${encodeURIComponent('src/Counter.sol:Counter')}?project_id=counter-app`);
        assert.equal(qualified.body.data.source, 'src/Counter.sol');
      });
    });

    describe('compile errors are answers', () => {
      test('a type error comes back as a diagnostic with file, line and column, not a 500', async () => {
        const response = await c.call('POST', '/v1/compile', { body: { sources: broken } });
        assert.equal(response.status, 200);
        assert.equal(response.body.data.success, false);
        assert.deepEqual(response.body.data.artifacts, []);
        const [error] = response.body.data.diagnostics.filter((diagnostic: { severity: string }) => diagnostic.severity === 'error');
        assert.equal(error.type, 'TypeError');
        assert.equal(error.file, 'src/Broken.sol');
        assert.equal(error.line, 5);
        assert.equal(error.column, 9);
        assert.match(error.formatted, /src\/Broken\.sol:5:9/);
      });

      test('an unknown import is a diagnostic naming the import', async () => {
        const response = await c.call('POST', '/v1/compile', { body: { sources: unknownImport } });
        const [error] = response.body.data.diagnostics;
        assert.equal(response.body.data.success, false);
        assert.match(error.message, /unknown import "solmate\/tokens\/Nope\.sol"/);
        assert.equal(error.file, 'src/Importer.sol');
        assert.equal(error.line, 3);
      });

      test('a library path that climbs out of its package is refused like an unknown import', async () => {
        const sneaky = {
          'src/A.sol': '// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\nimport "forge-std/../../../../package.json.sol";\ncontract A {}\n',
        };
        const response = await c.call('POST', '/v1/compile', { body: { sources: sneaky } });
        assert.equal(response.body.data.success, false);
        assert.match(response.body.data.diagnostics[0].message, /leaves its library folder/);
      });
    });

    describe('bad input', () => {
      test('missing or empty sources, wrong paths and unknown fields are 400 invalid_request', async () => {
        const cases: Array<[unknown, RegExp]> = [
          [{}, /sources/],
          [{ sources: {} }, /at least one file/],
          [{ sources: { 'contracts/A.sol': 'contract A {}' } }, /under src\/, test\/ or script\//],
          [{ sources: { 'src/../A.sol': 'contract A {}' } }, /relative \.sol path/],
          [{ sources: { '/etc/A.sol': 'contract A {}' } }, /relative \.sol path/],
          [{ sources: { 'src/A.txt': 'x' } }, /\.sol/],
          [{ sources: counter, optimise: true }, /additional properties/],
          [{ sources: counter, optimize: 'yes' }, /boolean/],
          [{ sources: counter, project_id: 'has space' }, /project_id/],
        ];
        for (const [body, message] of cases) {
          const response = await c.call('POST', '/v1/compile', { body });
          assert.equal(response.status, 400, JSON.stringify(body));
          assert.equal(response.body.error?.code, 'invalid_request');
          assert.match(response.body.error?.message ?? '', message);
        }
      });

      test('an unknown target or artifact is 404; a missing project_id is 400', async () => {
        const target = await c.call('POST', '/v1/compile', { body: { sources: counter, targets: ['Nope'] } });
        assert.equal(target.status, 404);
        assert.match(target.body.error?.message ?? '', /unknown contract "Nope"/);
        const artifact = await c.call('GET', '/v1/artifacts/Nope?project_id=counter-app');
        assert.equal(artifact.status, 404);
        assert.equal((await c.call('GET', '/v1/artifacts/Counter')).status, 400);
      });
    });
  });
}
