import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { testEngines } from '@platform/testkit/databases';
import { type ServiceProcess, startServiceProcess } from '@platform/testkit/service-process';
import { type IdentityProvider, startIdentityProvider, startRouter } from './harness.ts';

const [pglite] = testEngines();

/** A built console as Vite lays it out: index.html and content-hashed assets. */
function consoleFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'router-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), `export const page = ${JSON.stringify('x'.repeat(4000))};`);
  return dir;
}

describe('the console at /console/ and the public reads', () => {
  let idp: IdentityProvider;
  let settlement: ServiceProcess;
  let router: Awaited<ReturnType<typeof startRouter>>;
  let bare: Awaited<ReturnType<typeof startRouter>>;
  let token: string;
  const dir = consoleFixture();
  const empty = mkdtempSync(join(tmpdir(), 'router-console-empty-'));

  before(async () => {
    idp = await startIdentityProvider();
    settlement = await startServiceProcess('settlement', { LEDGER_TOKEN: 'ledger-fleet-token', SETTLEMENT_DEV: 'true' });
    router = await startRouter(pglite!, idp, { env: { ROUTER_CONSOLE_DIR: dir, ROUTER_SETTLEMENT_URL: settlement.url, ROUTER_CONSOLE_RESOURCE: 'urn:test' } });
    bare = await startRouter(pglite!, idp, { env: { ROUTER_CONSOLE_DIR: empty } });
    token = await idp.token();
  });

  after(async () => {
    await router?.dispose();
    await bare?.dispose();
    await settlement?.stop();
    await idp?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  });

  test('serves the page without a token, under a CSP with no inline script and no other origin but the provider', async () => {
    const moved = await fetch(`${router.publicUrl}/console`, { redirect: 'manual' });
    assert.equal(moved.status, 308);
    assert.equal(moved.headers.get('location'), '/console/');
    const page = await router.call('GET', '/console/', null);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /index-abc123\.js/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, new RegExp(`connect-src 'self' ${new URL(idp.url).origin}(;|$)`));
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('cache-control'), 'no-cache');
  });

  test('sends assets compressed as the client accepts, cached for good under their hashed names', async () => {
    const raw = `export const page = ${JSON.stringify('x'.repeat(4000))};`;
    const path = `${router.publicUrl}/console/assets/index-abc123.js`;
    const br = await fetch(path, { headers: { 'accept-encoding': 'br' } });
    // fetch decodes br and gzip itself; ask node:http-level answers through the headers and a manual decode.
    assert.equal(br.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(br.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(await br.text(), raw);
    const { request } = await import('node:http');
    const bytes = (encoding: string) =>
      new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        request(path, { headers: { 'accept-encoding': encoding } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ encoding: response.headers['content-encoding'], body: Buffer.concat(chunks) }));
        })
          .on('error', reject)
          .end();
      });
    const brotli = await bytes('gzip, br');
    assert.equal(brotli.encoding, 'br');
    assert.equal(brotliDecompressSync(brotli.body).toString(), raw);
    const gzip = await bytes('gzip');
    assert.equal(gzip.encoding, 'gzip');
    assert.equal(gunzipSync(gzip.body).toString(), raw);
    const identity = await bytes('identity');
    assert.equal(identity.encoding, undefined);
    assert.equal(identity.body.toString(), raw);
  });

  test('answers the sign-in settings from the provider’s discovery, and refuses what is not there', async () => {
    const config = await router.call('GET', '/console/config.json', null);
    assert.equal(config.status, 200);
    assert.deepEqual(config.json.data, {
      client_id: 'platform-console',
      scope: 'openid',
      resource: 'urn:test',
      authorization_endpoint: `${idp.url}/authorize`,
      token_endpoint: `${idp.url}/token`,
      redirect_path: '/console/',
    });
    const missing = await router.call('GET', '/console/assets/nothing.js', null);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'not_found');
    const notBuilt = await bare.call('GET', '/console/', null);
    assert.equal(notBuilt.status, 503);
    assert.match(notBuilt.json.error.message, /npm run build -w web\/console/);
  });

  test('/ledger passes settlement’s public reads to a signed-in user, and nothing else', async () => {
    assert.equal((await router.call('GET', '/ledger/v1/info', null)).status, 401, 'sign-in is required');
    const info = await router.call('GET', '/ledger/v1/info', token);
    assert.equal(info.status, 200);
    assert.match(info.json.data.sequencer_public_key, /^[0-9a-f]{64}$/);
    const feed = await router.call('GET', '/ledger/v1/transfers?limit=5', token);
    assert.equal(feed.status, 200);
    assert.ok(Array.isArray(feed.json.data.transfers));
    for (const [method, path] of [
      ['POST', '/ledger/v1/pay'],
      ['GET', '/ledger/v1/balance'],
      ['POST', '/ledger/v1/dev/faucet'],
      ['GET', '/ledger/v1/receipt/1/../../balance'],
      ['DELETE', '/ledger/v1/info'],
      ['GET', '/market/v1/me/spend'],
    ] as const) {
      const refused = await router.call(method, path, token, method === 'POST' ? { body: {} } : {});
      assert.equal(refused.status, 404, `${method} ${path}`);
      assert.match(refused.json.error.message, /is not a public read/);
    }
    const unset = await router.call('GET', '/market/v1/catalog', token);
    assert.equal(unset.status, 503);
    assert.match(unset.json.error.message, /ROUTER_MARKETPLACE_URL/);
  });
});
