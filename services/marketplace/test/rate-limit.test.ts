import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { testEngines } from '@platform/testkit/databases';
import { type Marketplace, startMarketplace } from './harness.ts';

const engine = testEngines()[0];
describe('rate limits on the routes that write a nonce per call', () => {
  let market: Marketplace;
  before(async () => {
    market = await startMarketplace(engine as NonNullable<typeof engine>, { env: { MARKETPLACE_RATE_AUTH: '1/3' } });
  });
  after(async () => market.close());

  test('sign-in nonces and handshake challenges share a per-address bucket: 429 rate_limited with Retry-After past the burst', async () => {
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await market.call('POST', '/v1/developers/nonce', { body: {} })).status);
    statuses.push((await market.call('POST', '/v1/agent/auth/challenge', { body: { did: generateAgentKey().did } })).status);
    const limited = await market.call('POST', '/v1/developers/nonce', { body: {} });
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error, 'rate_limited');
    assert.equal(limited.headers['retry-after'], '1');
    assert.equal((await market.call('GET', '/v1/manifest-schema')).status, 200, 'other routes are not in that bucket');
    market.clock.advance(1_000);
    assert.equal((await market.call('POST', '/v1/developers/nonce', { body: {} })).status, 200, 'a second later one more');
  });
});
