import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { encodeErrorResult, encodeFunctionData, getAddress, parseAbi } from 'viem';
import { counter } from './fixtures/projects.ts';
import { alice, bob, type Contracts, startContracts, useTestChain } from './harness.ts';

const chain = useTestChain();

const counterAbi = parseAbi([
  'function count() view returns (uint256)',
  'function mustBeBig(uint256 x) pure returns (uint256)',
  'function reset()',
  'error NotOwner(address caller, address owner)',
]);

for (const engine of testEngines()) {
  describe(`simulate and call on ${engine.name}`, () => {
    let c: Contracts;
    let address: `0x${string}`;
    let owner: `0x${string}`;
    let projectId: string;
    before(async () => {
      c = await startContracts(engine, { localRpcUrl: chain.url });
      projectId = (await c.call('POST', '/v1/compile', { body: { sources: counter } })).body.data.project_id;
      const deployed = await c.call('POST', '/v1/deploy', {
        caller: alice,
        body: { idempotency_key: 'counter', chain_id: 'local', contract: 'Counter', project_id: projectId, constructor_args: [7] },
      });
      address = deployed.body.data.address;
      owner = deployed.body.data.deployer;
    });
    after(() => c.close());

    const call = (body: Record<string, unknown>, caller?: string) =>
      c.call('POST', '/v1/call', { body: { to: address, ...body }, ...(caller ? { caller } : {}) });

    describe('reads', () => {
      test('a method call decodes its result with the ABI of the contract deployed at the address', async () => {
        const response = await call({ method: 'count' });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.equal(response.body.data.mode, 'read');
        assert.equal(response.body.data.chain, 'local', 'the active chain by default');
        assert.deepEqual(response.body.data.decoded, '7');
        assert.equal(response.body.data.return_data, `0x${'7'.padStart(64, '0')}`);
      });

      test('raw data and a given ABI work too; simulate returns gas and the decoded result', async () => {
        const data = encodeFunctionData({ abi: counterAbi, functionName: 'mustBeBig', args: [500n] });
        const raw = await call({ data });
        assert.equal(raw.body.data.decoded, '500');
        const simulated = await c.call('POST', '/v1/simulate', { body: { chain_id: '31337', to: address, data, abi: counterAbi } });
        assert.equal(simulated.status, 200);
        assert.equal(simulated.body.data.success, true);
        assert.equal(simulated.body.data.decoded, '500');
        assert.ok(Number(simulated.body.data.gas_used) > 21_000);
      });

      test('reverts are answers, decoded: custom error with arguments, Error(string), panic code', async () => {
        const custom = await call({ method: 'reset' }, bob);
        assert.equal(custom.status, 200);
        assert.equal(custom.body.data.success, false);
        const bobAddress = custom.body.data.from;
        assert.equal(bobAddress, null, 'bob has no wallet yet, and a read does not make one');
        const stranger = getAddress(`0x${'b0'.repeat(20)}`);
        const fromStranger = await c.call('POST', '/v1/simulate', {
          body: { chain_id: 'local', to: address, data: encodeFunctionData({ abi: counterAbi, functionName: 'reset' }), from: stranger },
        });
        assert.deepEqual(fromStranger.body.data.revert, {
          kind: 'custom',
          name: 'NotOwner',
          signature: 'NotOwner(address,address)',
          args: [stranger, owner],
          message: `NotOwner("${stranger}", "${owner}")`,
          data: encodeErrorResult({ abi: counterAbi, errorName: 'NotOwner', args: [stranger, owner] }),
        });
        const reason = await call({ method: 'mustBeBig', args: [1] });
        assert.deepEqual({ kind: reason.body.data.revert.kind, message: reason.body.data.revert.message }, { kind: 'error', message: 'x too small' });
        const panic = await call({ method: 'divide', args: [1, 0] });
        assert.equal(panic.body.data.revert.kind, 'panic');
        assert.equal(panic.body.data.revert.code, 0x12);
        assert.match(panic.body.data.revert.message, /division or modulo by zero/);
      });
    });

    describe('writes', () => {
      test('simulate_only=false signs with the caller wallet, waits for the receipt and decodes events', async () => {
        const response = await call({ method: 'increment', simulate_only: false }, alice);
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.equal(response.body.data.mode, 'write');
        assert.equal(response.body.data.status, 'confirmed');
        assert.equal(response.body.data.from, owner);
        const [event] = response.body.data.events;
        assert.equal(event.name, 'Incremented');
        assert.deepEqual(event.args, { by: owner, count: '8' });
        assert.equal(await chain.client.readContract({ address, abi: counterAbi, functionName: 'count' }), 8n);
      });

      test('a write that would revert is refused before signing with the revert decoded', async () => {
        const response = await call({ method: 'reset', simulate_only: false }, bob);
        assert.equal(response.status, 409);
        assert.equal(response.body.error?.reason, 'execution_reverted');
        assert.equal((response.body.error?.revert as { name?: string } | undefined)?.name, 'NotOwner');
      });

      test('a write without the caller header is 400; the owner may reset', async () => {
        assert.equal((await call({ method: 'reset', simulate_only: false })).status, 400);
        const reset = await call({ method: 'reset', simulate_only: false }, alice);
        assert.equal(reset.body.data.status, 'confirmed');
      });
    });

    describe('bad input', () => {
      test('bad hex, bad addresses and bad arguments are 400 naming the field', async () => {
        const cases: Array<[Record<string, unknown>, RegExp]> = [
          [{ data: '0x123' }, /data must be 0x-prefixed hex/],
          [{ data: 'zz' }, /data must be 0x-prefixed hex/],
          [{ to: '0x1234', method: 'count' }, /to/],
          [{ to: `0x${'g'.repeat(40)}`, method: 'count' }, /to must be a 20-byte 0x address/],
          [{ method: 'count', data: '0x' }, /not both/],
          [{}, /method .* or data/],
          [{ method: 'mustBeBig', args: ['abc'] }, /must be an integer/],
          [{ method: 'mustBeBig', args: [] }, /takes 1 argument/],
          [{ method: 'nope' }, /no function "nope"/],
          [{ method: 'count', value: '-1' }, /value must be wei/],
          [{ method: 'count', block: 'yesterday' }, /additional properties/],
        ];
        for (const [body, message] of cases) {
          const response = await call(body);
          assert.equal(response.status, 400, JSON.stringify(body));
          assert.match(response.body.error?.message ?? '', message, JSON.stringify(body));
        }
        const badBlock = await c.call('POST', '/v1/simulate', { body: { chain_id: 'local', to: address, block: 'yesterday' } });
        assert.match(badBlock.body.error?.message ?? '', /block must be/);
      });

      test('a method on an address with no known ABI is 400; an unknown chain is 404', async () => {
        const unknown = await call({ to: `0x${'12'.repeat(20)}`, method: 'count' });
        assert.equal(unknown.status, 400);
        assert.match(unknown.body.error?.message ?? '', /no ABI known/);
        const chainRef = await call({ method: 'count', chain_id: '424242' });
        assert.equal(chainRef.status, 404);
      });

      test('contract and project_id give the ABI for any address', async () => {
        const response = await call({ method: 'count', contract: 'Counter', project_id: projectId });
        assert.equal(response.body.data.decoded, String(await chain.client.readContract({ address, abi: counterAbi, functionName: 'count' })));
        const wrong = await call({ method: 'count', contract: 'Counter', project_id: 'no-such-project' });
        assert.equal(wrong.status, 404);
      });
    });
  });
}
