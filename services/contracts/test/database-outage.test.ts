import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { driveThroughOutage, injectedAnswer } from '@platform/testkit/outage-drill';
import { type Contracts, startContracts, transportToken, useTestChain } from './harness.ts';

const behind = await postgresBehindLink();
// A chain only when the suite runs.
const chain = behind ? useTestChain() : undefined;
const rpcUrl = () => (chain as NonNullable<typeof chain>).url;

describe('the contract engine while its database goes away', { skip: behind ? false : 'needs TEST_DATABASE_URL', timeout: 60_000 }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let c: Contracts;
  before(async () => {
    c = await startContracts(engine, { localRpcUrl: rpcUrl() });
  });
  after(async () => {
    outage.end();
    await c?.close();
    await close();
  });

  test('defers chain registrations and registry reads with 503 and Retry-After, then serves again, and keeps every chain it registered', async () => {
    const headers = { authorization: `Bearer ${transportToken}` };
    const { acknowledged } = await driveThroughOutage({
      outage,
      call: async (n) => {
        const id = `outage-${n}`;
        const response =
          n % 2 === 0
            ? await c.app.inject({ method: 'POST', url: '/v1/chains', headers, payload: { id, name: `Outage ${n}`, rpc_url: rpcUrl(), chain_id: 31337 } })
            : await c.app.inject({ method: 'GET', url: '/v1/registry/deployments', headers });
        return { answer: injectedAnswer(response), ack: n % 2 === 0 ? id : undefined };
      },
    });
    const listed = new Set(((await c.call('GET', '/v1/chains')).body.data.chains as { id: string }[]).map((profile) => profile.id));
    for (const id of acknowledged) assert.ok(listed.has(id), `registered chain ${id}`);
  });
});
