import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCloudflareStandIn } from '@platform/testkit/cloudflare-stand-in';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { CloudflareRunner, scriptName } from '../src/hosting/cloudflare/cloudflare-runner.ts';
import { type Developer, signIn } from './developer-fixtures.ts';
import { hostedManifest, startOrigin, upload, workerModules } from './hosted-fixtures.ts';
import { type Caller, type PaidMarketplace, paidWorldForFile, payTerms, startPaidMarketplace } from './paid-fixtures.ts';

/*
 * The Workers for Platforms runner against a local stand-in of the Cloudflare API (testkit cloudflare-stand-in.ts),
 * whose uploaded scripts run in a real workerd behind a dispatch Worker: the calls after a deploy are real.
 */
const world = paidWorldForFile();
let cloudflare: Awaited<ReturnType<typeof startCloudflareStandIn>>;
let origin: Awaited<ReturnType<typeof startOrigin>>;
before(async () => {
  [cloudflare, origin] = await Promise.all([startCloudflareStandIn(), startOrigin()]);
});
after(async () => {
  await cloudflare?.close();
  await origin?.close();
});

for (const engine of testEngines()) {
  describe(`hosted mode on Workers for Platforms (a stand-in) on ${engine.name}`, () => {
    let market: PaidMarketplace;
    let runner: CloudflareRunner;
    let developer: Developer;
    let serviceId: string;
    let first: string;
    before(async () => {
      runner = new CloudflareRunner({ ...cloudflare, logger: silentLogger });
      market = await startPaidMarketplace(engine, world.settlement, { runner });
      developer = await signIn(market);
      serviceId = (await market.call('POST', '/v1/services', { headers: developer.headers, body: { manifest: hostedManifest() } })).body.data.id;
    });
    after(async () => {
      await market.close();
      await runner.close();
    });
    async function paidCall(caller: Caller, operation: string, args: Record<string, unknown> = {}) {
      const body = { operation, args };
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body });
      return market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body,
        headers: { 'x-ledger-payment': payTerms(caller.key, challenge.body.detail.terms) },
      });
    }
    const metadata = (version: string) => ({
      main_module: 'main.js',
      egress_allowlist: ['127.0.0.1'],
      bindings: [
        { type: 'plain_text', name: 'VERSION', text: version },
        { type: 'secret_text', name: 'API_KEY', text: 'cf-secret-value' },
      ],
    });

    test('a deployment is a script in the dispatch namespace, with its bindings and secrets, and answers paid calls', async () => {
      await upload(market, developer.headers, serviceId, metadata('v1'), workerModules);
      const deployed = await market.call('POST', `/v1/services/${serviceId}/deploy`, { headers: developer.headers, body: {} });
      assert.equal(deployed.body.data.status, 'running', deployed.body.data.failure);
      assert.equal(deployed.body.data.runner, 'cloudflare');
      first = deployed.body.data.id;
      const script = cloudflare.scripts.get(scriptName(first));
      assert.ok(script, `no script ${scriptName(first)}`);
      assert.equal(script.mainModule, 'platform-entry.js');
      assert.deepEqual(script.compatibilityFlags, ['nodejs_compat']);
      assert.deepEqual(script.bindings.map((binding) => `${binding.type}:${binding.name}`).sort(), ['plain_text:VERSION', 'secret_text:API_KEY']);
      assert.equal((await market.call('POST', `/v1/services/${serviceId}/publish`, { headers: developer.headers })).status, 200);
      const caller = await market.fundedCaller('1');
      const paid = await paidCall(caller, 'echo', { text: 'via dispatch' });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      assert.deepEqual(paid.body.data.result, { echo: { text: 'via dispatch' }, version: 'v1' });
      const refused = await paidCall(caller, 'fetch', { url: `http://localhost:${origin.port}/` });
      assert.equal(refused.body.data.result.status, 403);
      const allowed = await paidCall(caller, 'fetch', { url: `http://127.0.0.1:${origin.port}/` });
      assert.equal(allowed.body.data.result.text, 'hello from origin');
      const lines = (await market.call('GET', `/v1/services/${serviceId}/logs?limit=1000`, { headers: developer.headers })).body.data.lines as Array<{
        message: string;
        invocation_id: string | null;
      }>;
      assert.ok(lines.some((line) => line.invocation_id === refused.body.data.invocation_id && /egress refused: localhost/.test(line.message)));
    });

    test('a redeploy uploads a new script and deletes the one it replaced; delisting deletes the rest', async () => {
      const redeployed = await market.call('POST', `/v1/services/${serviceId}/redeploy`, {
        headers: developer.headers,
        body: { bindings: metadata('v2').bindings },
      });
      assert.equal(redeployed.body.data.status, 'running', redeployed.body.data.failure);
      const caller = await market.fundedCaller('1');
      assert.equal((await paidCall(caller, 'echo')).body.data.result.version, 'v2');
      await eventually(() => !cloudflare.scripts.has(scriptName(first)), 'the replaced script deleted');
      assert.ok(
        cloudflare.requests.includes(
          `DELETE /client/v4/accounts/${cloudflare.accountId}/workers/dispatch/namespaces/${cloudflare.namespace}/scripts/${scriptName(first)}`,
        ),
      );
      assert.equal((await market.call('POST', `/v1/services/${serviceId}/delist`, { headers: developer.headers })).status, 200);
      await eventually(() => !cloudflare.scripts.has(scriptName(redeployed.body.data.id)), 'the delisted listing’s script deleted');
    });

    test('a refused API token fails the deploy phase with the API’s reason', async () => {
      const badRunner = new CloudflareRunner({ ...cloudflare, apiToken: 'wrong', logger: silentLogger });
      const attempt = badRunner.upload({
        id: '01a23300-0000-7000-8000-000000000000',
        bundle: 'export default {}',
        wasm: [],
        env: {},
        secretNames: [],
        egressAllowlist: [],
        compatibilityDate: '2026-11-17',
      });
      await assert.rejects(
        attempt,
        (error: Error & { phase?: string }) => error.phase === 'deploy' && /refused the script \(403\): Authentication error/.test(error.message),
      );
      await badRunner.close();
    });
  });
}
