import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { listenOnFreePort } from '@platform/testkit/local-server';
import type { Address } from 'viem';
import { nonceOf } from './chain-client.ts';
import { counter } from './fixtures/projects.ts';
import { alice, startContracts, useTestChain } from './harness.ts';

const chain = useTestChain();

/**
 * The node behind a JSON-RPC relay that can hold the next `eth_sendRawTransaction` until told to let it through, as a
 * slow network or a busy machine would between a deploy recording its signed bytes and sending them.
 */
async function holdingRelay(nodeUrl: string) {
  let hold: { reached: () => void; released: Promise<void> } | undefined;
  const server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    if (hold && (JSON.parse(body) as { method?: string }).method === 'eth_sendRawTransaction') {
      const held = hold;
      hold = undefined;
      held.reached();
      await held.released;
    }
    const answer = await fetch(nodeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  });
  const listening = await listenOnFreePort(server);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    /** Holds the next send: `reached` resolves once it is held, `release` lets it through. */
    holdNextSend() {
      const reached = Promise.withResolvers<void>();
      const released = Promise.withResolvers<void>();
      hold = { reached: reached.resolve, released: released.promise };
      return { reached: reached.promise, release: released.resolve };
    },
    close: listening.close,
  };
}

for (const engine of testEngines()) {
  describe(`a deploy whose retry reaches the node first, on ${engine.name}`, () => {
    let relay: Awaited<ReturnType<typeof holdingRelay>>;
    let c: Awaited<ReturnType<typeof startContracts>>;
    let projectId: string;
    before(async () => {
      relay = await holdingRelay(chain.url);
      c = await startContracts(engine, { localRpcUrl: relay.url });
      projectId = (await c.call('POST', '/v1/compile', { body: { sources: counter, project_id: `counter-race-${engine.name}` } })).body.data.project_id;
    });
    after(async () => {
      await c.close();
      await relay.close();
    });

    const deploy = (key: string) =>
      c.call('POST', '/v1/deploy', {
        caller: alice,
        body: { idempotency_key: key, chain_id: 'local', contract: 'Counter', project_id: projectId, constructor_args: [7] },
      });

    test('the first request answers the deployment (not a refusal), it is recorded once, and the wallet sent one transaction', async () => {
      const deployer = (await deploy('warm-up')).body.data.deployer as Address;
      const nonce = await nonceOf(chain.client, deployer);
      const hold = relay.holdNextSend();
      const first = deploy('retried');
      await hold.reached;
      // The first request has recorded its signed bytes and waits on the network; the retry re-sends those bytes.
      const retry = await deploy('retried');
      assert.equal(retry.status, 200, JSON.stringify(retry.body));
      assert.equal(retry.body.data.replayed, true);
      hold.release();
      const answer = await first;
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.data.status, 'confirmed');
      assert.equal(answer.body.data.tx_hash, retry.body.data.tx_hash);
      assert.equal(await nonceOf(chain.client, deployer), nonce + 1);
      const lookup = await c.call('GET', '/v1/registry/lookup?idempotency_key=retried&chain_id=local');
      assert.equal(lookup.body.data.found, true);
      assert.equal(lookup.body.data.status, 'confirmed');
      assert.equal(lookup.body.data.address, answer.body.data.address);
    });
  });
}
