import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { silentLogger, testEngines } from '@platform/testkit/databases';
import { verifyTypedData } from 'viem';
import { WorkerdRunner } from '../src/hosting/workerd/workerd-runner.ts';
import { type Developer, signIn } from './developer-fixtures.ts';
import { hostedManifest, startOrigin, upload, workerModules } from './hosted-fixtures.ts';
import { type Caller, type PaidMarketplace, paidWorldForFile, payTerms, startPaidMarketplace } from './paid-fixtures.ts';

/*
 * Hosted mode end to end on real processes: settlement in its own process, one workerd (started once for the file,
 * serving every deployment of both engines' marketplaces), and a paid call from an agent through settlement.
 */
const world = paidWorldForFile();
const runner = new WorkerdRunner({ logger: silentLogger, allowPrivate: true });
let origin: Awaited<ReturnType<typeof startOrigin>>;
before(async () => {
  origin = await startOrigin();
});
after(async () => {
  await runner.close();
  await origin.close();
});

const secretValue = 'sk-live-do-not-show-0123456789';

for (const engine of testEngines()) {
  describe(`hosted mode on ${engine.name}`, () => {
    let market: PaidMarketplace;
    let developer: Developer;
    let serviceId: string;
    let firstDeployment: string;
    before(async () => {
      market = await startPaidMarketplace(engine, world.settlement, { runner });
      developer = await signIn(market);
    });
    after(async () => market.close());

    const metadata = (version: string) => ({
      main_module: 'main.js',
      compatibility_date: '2026-11-01',
      egress_allowlist: ['127.0.0.1'],
      bindings: [
        { type: 'plain_text', name: 'VERSION', text: version },
        { type: 'plain_text', name: 'GREETING', text: 'developer' },
        { type: 'secret_text', name: 'API_KEY', text: secretValue },
      ],
    });
    const owner = () => developer.headers;
    async function paidCall(caller: Caller, operation: string, args: Record<string, unknown> = {}) {
      const body = { operation, args };
      const challenge = await market.call('POST', `/v1/invoke/${serviceId}`, { caller, body });
      assert.equal(challenge.status, 402, JSON.stringify(challenge.body));
      return market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body,
        headers: { 'x-ledger-payment': payTerms(caller.key, challenge.body.detail.terms) },
      });
    }
    const logs = async (query = '') =>
      (await market.call('GET', `/v1/services/${serviceId}/logs${query}`, { headers: owner() })).body.data.lines as Array<Record<string, string | null>>;

    test('upload (content-addressed), deploy through build, deploy and running, then publish', async () => {
      const created = await market.call('POST', '/v1/services', { headers: owner(), body: { manifest: hostedManifest() } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      serviceId = created.body.data.id;
      const early = await market.call('POST', `/v1/services/${serviceId}/publish`, { headers: owner() });
      assert.equal(early.status, 409);
      assert.equal(early.body.detail.reason, 'no_running_deployment');

      const uploaded = await upload(market, owner(), serviceId, metadata('v1'), workerModules);
      assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
      assert.match(uploaded.body.data.id, /^[0-9a-f]{64}$/);
      assert.deepEqual(
        uploaded.body.data.bindings.find((binding: { name: string }) => binding.name === 'API_KEY'),
        { type: 'secret_text', name: 'API_KEY' },
      );
      const again = await upload(market, owner(), serviceId, metadata('v1'), workerModules);
      assert.equal(again.status, 200);
      assert.equal(again.body.data.id, uploaded.body.data.id);

      const deployed = await market.call('POST', `/v1/services/${serviceId}/deploy`, { headers: owner(), body: {} });
      assert.equal(deployed.status, 201, JSON.stringify(deployed.body));
      const deployment = deployed.body.data;
      assert.equal(deployment.status, 'running', deployment.failure);
      assert.equal(deployment.current, true);
      assert.deepEqual(
        deployment.phases.map((phase: { name: string; state: string }) => `${phase.name}:${phase.state}`),
        ['build:succeeded', 'deploy:succeeded', 'running:succeeded'],
      );
      firstDeployment = deployment.id;
      const published = await market.call('POST', `/v1/services/${serviceId}/publish`, { headers: owner() });
      assert.equal(published.status, 200, JSON.stringify(published.body));
      assert.equal(published.body.data.status, 'active');
      const listed = await market.call('GET', `/v1/services/${serviceId}/deployments`, { headers: owner() });
      assert.equal(listed.body.data.current, firstDeployment);
      const one = await market.call('GET', `/v1/services/${serviceId}/deployments/${firstDeployment}`, { headers: owner() });
      assert.equal(one.body.data.id, firstDeployment);
    });

    test('a paid call to the hosted worker settles, and both receipts verify', async () => {
      const caller = await market.fundedCaller('1');
      const paid = await paidCall(caller, 'echo', { text: 'hi' });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      assert.deepEqual(paid.body.data.result, { echo: { text: 'hi' }, version: 'v1' });
      assert.equal(paid.body.data.cost, '0.001000');
      const receipt = (await market.call('GET', `/v1/receipts/${paid.body.data.invocation_id}`, { caller })).body.data;
      assert.equal(
        await verifyTypedData({
          address: receipt.signer,
          domain: receipt.domain,
          types: receipt.types,
          primaryType: 'Receipt',
          message: receipt.message,
          signature: receipt.signature,
        }),
        true,
      );
      const movement = await market.ledger.receipt(String(paid.body.data.settlement_seq));
      assert.equal(movement.amount, '0.001000');
      assert.equal(movement.from, caller.did);
      assert.equal((await market.ledger.account(caller.did)).balance, '0.999000');
      const lines = await logs(`?deployment_id=${firstDeployment}`);
      assert.ok(lines.some((line) => line.message === 'modules loaded' && line.invocation_id === null));
      assert.ok(lines.some((line) => line.message === 'serving echo' && line.invocation_id === paid.body.data.invocation_id && line.level === 'info'));
    });

    test('a worker that throws is released (nothing charged) and its exception is logged with the invocation', async () => {
      const caller = await market.fundedCaller('1');
      const failed = await paidCall(caller, 'throw');
      assert.equal(failed.status, 503, JSON.stringify(failed.body));
      assert.equal(failed.body.detail.charged, '0.000000');
      assert.equal((await market.ledger.account(caller.did)).balance, '1.000000');
      const invocation = failed.body.detail.invocation_id;
      const errors = await logs('?level=error');
      const line = errors.find((entry) => entry.invocation_id === invocation);
      assert.ok(line, JSON.stringify(errors));
      assert.match(line.message as string, /uncaught Error: the worker fell over/);
      assert.ok(errors.every((entry) => entry.level === 'error'));
    });

    test('a call past its time limit is cut off and released', async () => {
      const caller = await market.fundedCaller('1');
      const slow = await paidCall(caller, 'slow');
      assert.equal(slow.status, 503, JSON.stringify(slow.body));
      assert.equal(slow.body.detail.reason, 'provider_timeout');
      assert.equal(slow.body.detail.charged, '0.000000');
      assert.equal((await market.ledger.account(caller.did)).balance, '1.000000');
    });

    test('egress outside the allowlist is refused and logged; the allowlisted host is reached', async () => {
      const caller = await market.fundedCaller('1');
      const allowed = await paidCall(caller, 'fetch', { url: `http://127.0.0.1:${origin.port}/` });
      assert.deepEqual(allowed.body.data.result, { status: 200, text: 'hello from origin' });
      const refused = await paidCall(caller, 'fetch', { url: `http://localhost:${origin.port}/` });
      assert.equal(refused.body.data.result.status, 403);
      const lines = await logs('?level=warn');
      assert.ok(lines.some((line) => line.invocation_id === refused.body.data.invocation_id && /egress refused: localhost/.test(line.message as string)));
    });

    test('a secret binding reaches the worker and appears in no answer and no log', async () => {
      const caller = await market.fundedCaller('1');
      const paid = await paidCall(caller, 'secret');
      assert.deepEqual(paid.body.data.result, { key_length: secretValue.length, greeting: 'hello developer' });
      const answers = [
        paid.body,
        (await market.call('GET', `/v1/services/${serviceId}/deployments`, { headers: owner() })).body,
        (await market.call('GET', `/v1/services/${serviceId}/logs?limit=1000`, { headers: owner() })).body,
        (await upload(market, owner(), serviceId, metadata('v1'), workerModules)).body,
      ];
      for (const answer of answers) assert.ok(!JSON.stringify(answer).includes(secretValue));
      assert.ok((await logs()).some((line) => line.message === 'the key is [secret]'));
      const stored = await market.database.db.selectFrom('hosted_artifacts').select('bindings').execute();
      assert.ok(!JSON.stringify(stored).includes(secretValue), 'sealed at rest');
    });

    test('a build that imports what the runtime lacks fails in build, naming the line; the running deployment stays', async () => {
      const broken = await upload(
        market,
        owner(),
        serviceId,
        { main_module: 'main.js' },
        { 'main.js': `// a worker\nimport lodash from 'lodash';\nexport default { fetch: () => new Response(lodash) };\n` },
      );
      assert.equal(broken.status, 201);
      const deployed = await market.call('POST', `/v1/services/${serviceId}/deploy`, { headers: owner(), body: { artifact_id: broken.body.data.id } });
      assert.equal(deployed.status, 201);
      assert.equal(deployed.body.data.status, 'failed');
      assert.equal(deployed.body.data.failed_phase, 'build');
      assert.match(deployed.body.data.failure, /^main\.js:2:\d+: cannot import "lodash"/);
      assert.equal(deployed.body.data.current, false);
      const listed = await market.call('GET', `/v1/services/${serviceId}/deployments`, { headers: owner() });
      assert.equal(listed.body.data.current, firstDeployment);
    });

    test('a redeploy under steady paid load drops no call and charges none twice; deploying the first id rolls back', async () => {
      const caller = await market.fundedCaller('1');
      const answers: Array<{ status: number; version?: string }> = [];
      let redeploying = true;
      const load = (async () => {
        while (redeploying || answers.length < 8) {
          const paid = await paidCall(caller, 'echo');
          answers.push({ status: paid.status, version: paid.body.data?.result?.version });
        }
      })();
      const loads = [load, load];
      const redeployed = await market.call('POST', `/v1/services/${serviceId}/redeploy`, {
        headers: owner(),
        body: { bindings: [...metadata('v2').bindings] },
      });
      redeploying = false;
      await Promise.all(loads);
      assert.equal(redeployed.body.data.status, 'running', redeployed.body.data.failure);
      assert.ok(
        answers.every((answer) => answer.status === 200),
        JSON.stringify(answers),
      );
      const after = await paidCall(caller, 'echo');
      assert.equal(after.body.data.result.version, 'v2');
      const calls = answers.length + 1;
      assert.equal((await market.ledger.account(caller.did)).balance, (1 - calls * 0.001).toFixed(6));
      const old = await market.call('GET', `/v1/services/${serviceId}/deployments/${firstDeployment}`, { headers: owner() });
      assert.equal(old.body.data.status, 'stopped');

      const rolledBack = await market.call('POST', `/v1/services/${serviceId}/deploy`, { headers: owner(), body: { deployment_id: firstDeployment } });
      assert.equal(rolledBack.body.data.status, 'running', rolledBack.body.data.failure);
      assert.equal(rolledBack.body.data.rollback_of, firstDeployment);
      assert.equal((await paidCall(caller, 'echo')).body.data.result.version, 'v1');
    });

    test('logs and deployments outlive a marketplace restart; the worker answers again after it', async () => {
      const before = await logs('?limit=1000');
      await market.restart();
      const after = await logs('?limit=1000');
      assert.deepEqual(after, before);
      const caller = await market.fundedCaller('1');
      assert.equal((await paidCall(caller, 'echo')).body.data.result.version, 'v1');
    });

    test('another developer is refused (403) on every hosted route', async () => {
      const stranger = await signIn(market);
      const { body, contentType } = await import('./hosted-fixtures.ts').then((fixtures) => fixtures.uploadBody(metadata('x'), workerModules));
      const attempts = [
        market.call('POST', `/v1/services/${serviceId}/artifacts`, { headers: { ...stranger.headers, 'content-type': contentType }, body }),
        market.call('POST', `/v1/services/${serviceId}/deploy`, { headers: stranger.headers, body: {} }),
        market.call('POST', `/v1/services/${serviceId}/redeploy`, { headers: stranger.headers, body: {} }),
        market.call('GET', `/v1/services/${serviceId}/deployments`, { headers: stranger.headers }),
        market.call('GET', `/v1/services/${serviceId}/deployments/${firstDeployment}`, { headers: stranger.headers }),
        market.call('GET', `/v1/services/${serviceId}/logs`, { headers: stranger.headers }),
      ];
      for (const answer of await Promise.all(attempts)) assert.equal(answer.status, 403, JSON.stringify(answer.body));
    });
  });
}
