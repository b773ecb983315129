import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { limits } from '../src/limits.ts';
import { signIn } from './developer-fixtures.ts';
import { type Marketplace, startMarketplace } from './harness.ts';

const engine = testEngines()[0];
describe('the spec’s error envelope, the hosted routes and the body limit', () => {
  let market: Marketplace;
  before(async () => {
    market = await startMarketplace(engine as NonNullable<typeof engine>);
  });
  after(async () => market.close());

  const id = '01a212a7-1f86-7f46-8e3a-d9fa65957714';

  test('hosted-mode routes answer anyone without credentials 401 and a developer 404 for an unknown listing, in the envelope, whatever the body', async () => {
    const developer = await signIn(market);
    const routes: Array<['GET' | 'POST', string]> = [
      ['POST', `/v1/services/${id}/artifacts`],
      ['POST', `/v1/services/${id}/deploy`],
      ['POST', `/v1/services/${id}/redeploy`],
      ['GET', `/v1/services/${id}/deployments`],
      ['GET', `/v1/services/${id}/deployments/${id}`],
      ['GET', `/v1/services/${id}/logs`],
    ];
    for (const [method, url] of routes) {
      const upload = url.endsWith('/artifacts');
      const send = (headers: Record<string, string>) =>
        market.app.inject({
          method,
          url,
          headers: method === 'GET' ? headers : { 'content-type': upload ? 'multipart/form-data; boundary=x' : 'application/json', ...headers },
          ...(method === 'GET' ? {} : { payload: upload ? '--x\r\n\r\nbytes\r\n--x--' : '{}' }),
        });
      assert.equal((await send({})).statusCode, 401, url);
      const answer = await send(developer.headers);
      const body = answer.json();
      assert.equal(answer.statusCode, 404, url);
      assert.equal(body.error, 'not_found');
      assert.equal(typeof body.message, 'string');
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

  test('a caller’s malformed input is 400 invalid_request naming what is wrong: a missing service_id, a lone surrogate, a manifest nested 20,000 deep', async () => {
    const caller = await market.caller();
    const json = { 'content-type': 'application/json' };
    for (const url of ['/v1/channels', '/v1/streams']) {
      const missing = await market.call('POST', url, { caller, body: {} });
      assert.equal(missing.status, 400, url);
      assert.equal(missing.body.error, 'invalid_request');
      assert.match(missing.body.message, /service_id/);
    }
    const surrogate = await market.call('POST', `/v1/invoke/${id}`, { caller, headers: json, body: '{"operation":"run","args":{"text":"\\ud800"}}' });
    assert.equal(surrogate.status, 400);
    assert.equal(surrogate.body.detail.field, 'args.text');
    const developer = await signIn(market);
    const deep = `{"manifest":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    for (const [method, url] of [
      ['POST', '/v1/services'],
      ['PATCH', `/v1/services/${id}`],
    ] as const) {
      const answer = await market.call(method, url, { headers: { ...developer.headers, ...json }, body: deep });
      assert.equal(answer.status, 400, url);
      assert.equal(answer.body.message, 'the body is nested deeper than 64 levels');
    }
  });
});
