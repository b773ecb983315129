import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { limits } from '../src/limits.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

const engine = testEngines()[0];
describe('the spec’s error envelope, hosted mode and the body limit', () => {
  let market: Marketplace;
  before(async () => {
    market = await startMarketplace(engine as NonNullable<typeof engine>);
  });
  after(async () => market.close());

  const id = '01a212a7-1f86-7f46-8e3a-d9fa65957714';

  test('hosted-mode routes answer 501 service_unavailable saying so, whatever the body', async () => {
    const routes: Array<['GET' | 'POST', string]> = [
      ['POST', `/v1/services/${id}/artifacts`],
      ['POST', `/v1/services/${id}/deploy`],
      ['POST', `/v1/services/${id}/redeploy`],
      ['GET', `/v1/services/${id}/deployments`],
      ['GET', `/v1/services/${id}/deployments/d-1`],
      ['GET', `/v1/services/${id}/logs`],
    ];
    for (const [method, url] of routes) {
      const answer = await market.app.inject({
        method,
        url,
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
        ...(method === 'POST' ? { payload: '--x\r\n\r\nbytes\r\n--x--' } : {}),
      });
      assert.equal(answer.statusCode, 501, url);
      const body = answer.json();
      assert.equal(body.error, 'service_unavailable');
      assert.match(body.message, /hosted mode/);
      assert.equal(typeof body.detail, 'object');
      assert.equal(body.ok, false);
    }
  });

  test('errors carry {error, message, detail} with one of the eleven codes', async () => {
    const unknown = await market.call('GET', '/v1/no-such-route');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, 'not_found');
    assert.equal(typeof unknown.body.message, 'string');
    assert.equal(unknown.body.detail.retryable, false);
    const malformed = await market.app.inject({
      method: 'POST',
      url: '/v1/developers/auth',
      headers: { 'content-type': 'application/json' },
      payload: '{"message":',
    });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().error, 'invalid_request');
  });

  test(`bodies up to ${limits.bodyBytes} bytes are read; one byte more is 413 invalid_request`, async () => {
    const bodyOf = (size: number) => {
      const shell = JSON.stringify({ message: '', signature: '0x' });
      return JSON.stringify({ message: 'x'.repeat(size - shell.length), signature: '0x' });
    };
    const atLimit = await market.app.inject({
      method: 'POST',
      url: '/v1/developers/auth',
      headers: { 'content-type': 'application/json' },
      payload: bodyOf(limits.bodyBytes),
    });
    assert.notEqual(atLimit.statusCode, 413);
    assert.equal(atLimit.statusCode, 400, 'read and refused for what it says, not for its size');
    const past = await market.app.inject({
      method: 'POST',
      url: '/v1/developers/auth',
      headers: { 'content-type': 'application/json' },
      payload: bodyOf(limits.bodyBytes + 1),
    });
    assert.equal(past.statusCode, 413);
    assert.equal(past.json().error, 'invalid_request');
  });
});
