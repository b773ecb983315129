import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { testEngines } from '@platform/testkit/databases';
import { assertBoundedLabels, metricFamilies, metricValue } from '@platform/testkit/metrics-text';
import { contractsMetrics } from '../src/metrics.ts';
import { minimalTests } from './fixtures/minimal-test.ts';
import { broken, counter } from './fixtures/projects.ts';
import { alice, type Contracts, startContracts, useTestChain } from './harness.ts';

const chain = useTestChain();
const metricsToken = 'contracts-metrics-token-for-this-test';

for (const engine of testEngines()) {
  describe(`contract engine metrics on ${engine.name}`, () => {
    let c: Contracts;
    before(async () => {
      c = await startContracts(engine, { localRpcUrl: chain.url, metrics: { metrics: createServiceMetrics('contracts'), metricsToken } });
    });
    after(() => c.close());

    const scrape = (bearer: string | null = metricsToken) => c.call('GET', '/metrics', { bearer });

    test('GET /metrics is 401 in the envelope without the metrics bearer, and with the transport bearer', async () => {
      for (const bearer of [null, 'wrong', undefined]) {
        const answer = await c.call('GET', '/metrics', bearer === undefined ? {} : { bearer });
        assert.equal(answer.status, 401, `bearer ${bearer}`);
        assert.equal(answer.body.error?.code, 'unauthorized');
      }
    });

    test('compiles, test runs and deploys by outcome; gas and spend of each mined deploy', async () => {
      const before = (await scrape()).text;
      const delta = (text: string, name: string, labels: Record<string, string> = {}) =>
        (metricValue(text, name, labels) ?? 0) - (metricValue(before, name, labels) ?? 0);
      const projectId = `metrics-counter-${engine.name}`;
      // Sources of this engine's own: the toolchain (and its compile cache) is shared by the file's engines.
      const sources = { ...counter, 'src/Salt.sol': `// ${engine.name}\n` };
      assert.equal((await c.call('POST', '/v1/compile', { body: { sources, project_id: projectId } })).body.data.cached, false);
      assert.equal((await c.call('POST', '/v1/compile', { body: { sources, project_id: projectId } })).body.data.cached, true);
      assert.equal((await c.call('POST', '/v1/compile', { body: { sources: broken } })).body.data.success, false);
      assert.equal((await c.call('POST', '/v1/compile', { body: { sources: counter, targets: ['NoSuchContract'] } })).status, 404);
      const tested = await c.call('POST', '/v1/test', { body: { sources: minimalTests } });
      assert.equal(tested.body.data.summary.failed, 1, JSON.stringify(tested.body));
      const deploy = (key: string, extra: Record<string, unknown> = {}) =>
        c.call('POST', '/v1/deploy', {
          caller: alice,
          body: { idempotency_key: key, chain_id: 'local', contract: 'Counter', project_id: projectId, constructor_args: [7], ...extra },
        });
      const deployed = await deploy('metrics-first');
      assert.equal(deployed.body.data.status, 'confirmed', JSON.stringify(deployed.body));
      assert.equal((await deploy('metrics-first')).body.data.replayed, true);
      assert.equal((await deploy('metrics-capped', { spend_cap_wei: '1000' })).status, 403);

      const answer = await scrape();
      assert.equal(answer.status, 200);
      const text = answer.text;
      assert.equal(delta(text, 'contracts_compiles_total', { outcome: 'compiled' }), 1);
      assert.equal(delta(text, 'contracts_compiles_total', { outcome: 'cached' }), 1);
      assert.equal(delta(text, 'contracts_compiles_total', { outcome: 'compile_error' }), 1);
      assert.equal(delta(text, 'contracts_compiles_total', { outcome: 'refused' }), 1);
      assert.equal(delta(text, 'contracts_tests_total', { outcome: 'failed' }), 1);
      assert.equal(delta(text, 'contracts_deploys_total', { outcome: 'confirmed' }), 1);
      assert.equal(delta(text, 'contracts_deploys_total', { outcome: 'replayed' }), 1);
      assert.equal(delta(text, 'contracts_deploys_total', { outcome: 'refused' }), 1);
      // One mined deploy observed: its gas as the receipt says, and what it cost (fee, no value) in ether.
      assert.equal(delta(text, 'contracts_deploy_gas_used_count'), 1);
      assert.equal(delta(text, 'contracts_deploy_gas_used_sum'), Number(deployed.body.data.gas_used));
      const receipt = await chain.client.getTransactionReceipt({ hash: deployed.body.data.tx_hash });
      const spend = delta(text, 'contracts_deploy_spend_sum');
      assert.ok(Math.abs(spend - Number(receipt.gasUsed * receipt.effectiveGasPrice) / 1e18) < 1e-12, `spend ${spend}`);
      assert.ok((metricValue(text, 'http_requests_total', { route: '/v1/deploy', status_class: '2xx' }) ?? 0) >= 2);
      assert.ok((metricValue(text, 'db_query_duration_seconds_count', { outcome: 'ok' }) ?? 0) > 0);
      assertBoundedLabels(text);
      assert.doesNotMatch(text, /did:|metrics-first|Counter/);
    });

    test('contractsMetrics alone registers the names the engine serves (deploy/observability checks them this way)', async () => {
      const alone = createServiceMetrics('contracts');
      contractsMetrics(alone);
      const served = metricFamilies((await scrape()).text);
      for (const name of metricFamilies(await alone.render()).keys()) assert.ok(served.has(name), name);
    });
  });
}
