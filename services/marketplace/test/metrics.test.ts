import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { listenOnFreePort } from '@platform/testkit/local-server';
import { assertBoundedLabels, sampleValue } from '@platform/testkit/metrics-text';
import { type HostedRunner, RunnerError } from '../src/hosting/runner.ts';
import { type Developer, signIn } from './developer-fixtures.ts';
import { hostedManifest, upload, workerModules } from './hosted-fixtures.ts';
import {
  type Caller,
  type PaidMarketplace,
  paidWorldForFile,
  payTerms,
  providerManifest,
  seedActiveListing,
  signVoucher,
  startPaidMarketplace,
} from './paid-fixtures.ts';

const metricsToken = 'marketplace-metrics-token-for-tests';
const world = paidWorldForFile();

/** A provider whose `/echo` answers only once the test releases it: a call held in the middle, its hold open. */
async function heldProvider() {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', async () => {
      await released;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result: { echo: {} }, units: 1 }));
    });
  });
  const listening = await listenOnFreePort(server);
  return { url: `http://127.0.0.1:${listening.port}`, release, close: listening.close };
}

/** A runner in this process: the deployer's phases run as with workerd, and a call answers the provider protocol. */
function standInRunner(): HostedRunner & { refuseNext(): void } {
  let refuse = false;
  return {
    kind: 'workerd',
    async upload() {
      if (refuse) {
        refuse = false;
        throw new RunnerError('deploy', 'the runner refused the upload');
      }
    },
    probe: async () => [],
    async call(_id, _path, init) {
      const body = JSON.parse(init.bodyText) as { args: unknown };
      const json = { result: { echo: body.args }, units: 1 };
      return { status: 200, headers: {}, text: JSON.stringify(json), json, logs: [], dropped: 0 };
    },
    remove: async () => {},
    close: async () => {},
    refuseNext() {
      refuse = true;
    },
  };
}

for (const engine of testEngines()) {
  describe(`marketplace metrics on ${engine.name}`, () => {
    const runner = standInRunner();
    let market: PaidMarketplace;
    let serviceId: string;
    let held: Awaited<ReturnType<typeof heldProvider>>;
    before(async () => {
      market = await startPaidMarketplace(engine, world.settlement, { runner, env: { PLATFORM_METRICS_TOKEN: metricsToken } });
      serviceId = await seedActiveListing(market.database.db, providerManifest(world.provider.url));
      held = await heldProvider();
    });
    after(async () => {
      held?.release();
      await held?.close();
      await market?.close();
    });

    const scrape = async (bearer: string | null = metricsToken) => {
      const answer = await market.app.inject({ method: 'GET', url: '/metrics', headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` } });
      return { status: answer.statusCode, text: answer.body, json: answer.headers['content-type']?.includes('json') ? answer.json() : undefined };
    };
    const count = async (outcome: string, rail: string) => sampleValue((await scrape()).text, 'marketplace_invocations_total', { outcome, rail }) ?? 0;

    async function paidCall(caller: Caller, operation: string, listing = serviceId) {
      const body = { operation, args: { text: 'metrics' } };
      const challenge = await market.call('POST', `/v1/invoke/${listing}`, { caller, body });
      assert.equal(challenge.status, 402, JSON.stringify(challenge.body));
      return market.call('POST', `/v1/invoke/${listing}`, { caller, body, headers: { 'x-ledger-payment': payTerms(caller.key, challenge.body.detail.terms) } });
    }

    test('calls by outcome and rail, and the providers’ latency, as callers pay for them; labels stay bounded', async () => {
      const start = (await scrape()).text;
      assert.equal(sampleValue(start, 'marketplace_invocations_total', { outcome: 'succeeded', rail: 'hold' }), 0, 'every series from the start');
      assert.equal(sampleValue(start, 'marketplace_provider_duration_seconds_count', { hosting: 'external' }), 0);
      const caller = await market.fundedCaller('1');
      assert.equal((await paidCall(caller, 'echo')).status, 200);
      assert.equal((await paidCall(caller, 'echo')).status, 200);
      assert.equal((await paidCall(caller, 'fail')).status, 503);
      assert.equal((await paidCall(caller, 'bad')).status, 503);
      assert.equal((await paidCall(caller, 'slow')).status, 503);
      assert.equal((await paidCall(await market.caller(generateAgentKey()), 'echo')).status, 402, 'a hold settlement refuses: no funds');
      const text = (await scrape()).text;
      for (const [outcome, expected] of [
        ['succeeded', 2],
        ['provider_error', 1],
        ['provider_bad_answer', 1],
        ['provider_timeout', 1],
        ['payment_refused', 1],
        ['provider_unreachable', 0],
      ] as const)
        assert.equal(sampleValue(text, 'marketplace_invocations_total', { outcome, rail: 'hold' }), expected, outcome);
      assert.equal(sampleValue(text, 'marketplace_provider_duration_seconds_count', { hosting: 'external' }), 5, 'every provider call, failures too');
      assert.equal(sampleValue(text, 'marketplace_holds_open', { rail: 'hold' }), 0, 'every hold captured or released');
      assert.ok((sampleValue(text, 'db_query_duration_seconds_count', { outcome: 'ok' }) as number) > 0);
      assert.doesNotMatch(text, new RegExp(caller.did));
      assertBoundedLabels(text);
    });

    test('a call being served holds its hold open until it is captured', async () => {
      const listing = await seedActiveListing(market.database.db, providerManifest(held.url));
      const caller = await market.fundedCaller('1');
      const answer = paidCall(caller, 'echo', listing);
      await eventually(async () => sampleValue((await scrape()).text, 'marketplace_holds_open', { rail: 'hold' }) === 1, 'the hold open while served');
      held.release();
      assert.equal((await answer).status, 200);
      assert.equal(sampleValue((await scrape()).text, 'marketplace_holds_open', { rail: 'hold' }), 0);
    });

    test('an open channel is a hold until it closes; its voucher calls are counted on their rail', async () => {
      const caller = await market.fundedCaller('1');
      const body = { service_id: serviceId, deposit: '0.5' };
      const challenge = await market.call('POST', '/v1/channels', { caller, body });
      const opened = await market.call('POST', '/v1/channels', {
        caller,
        body,
        headers: { 'x-ledger-payment': payTerms(caller.key, challenge.body.detail.terms) },
      });
      assert.equal(opened.status, 201, JSON.stringify(opened.body));
      const channel = opened.body.data;
      assert.equal(sampleValue((await scrape()).text, 'marketplace_holds_open', { rail: 'voucher' }), 1);
      const before = await count('succeeded', 'voucher');
      const tab = { id: channel.id, kind: 'channel' as const, service_id: serviceId };
      const paid = await market.call('POST', `/v1/invoke/${serviceId}`, {
        caller,
        body: { operation: 'echo', args: {}, payment: { rail: 'voucher', channel_id: channel.id, ...signVoucher(caller.key, tab, 1, '0.010000') } },
      });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      assert.equal(await count('succeeded', 'voucher'), before + 1);
      assert.equal((await market.call('POST', `/v1/channels/${channel.id}/close`, { caller })).status, 200);
      assert.equal(sampleValue((await scrape()).text, 'marketplace_holds_open', { rail: 'voucher' }), 0);
    });

    test('hosted deployments by phase, and the hosted provider’s latency', async () => {
      const developer: Developer = await signIn(market);
      const created = await market.call('POST', '/v1/services', { headers: developer.headers, body: { manifest: hostedManifest() } });
      const hosted = created.body.data.id as string;
      const metadata = { main_module: 'main.js', compatibility_date: '2026-11-01', egress_allowlist: [], bindings: [] };
      assert.equal((await upload(market, developer.headers, hosted, metadata, workerModules)).status, 201);
      const deploy = () => market.call('POST', `/v1/services/${hosted}/deploy`, { headers: developer.headers, body: {} });
      assert.equal((await deploy()).body.data.status, 'running');
      assert.equal((await deploy()).body.data.status, 'running', 'the second replaces the first');
      runner.refuseNext();
      assert.equal((await deploy()).body.data.status, 'failed');
      await eventually(async () => {
        const text = (await scrape()).text;
        return ['running', 'stopped', 'failed'].every((phase) => sampleValue(text, 'marketplace_deployments', { phase }) === 1);
      }, 'one deployment in each of running, stopped, failed');
      const text = (await scrape()).text;
      assert.equal(sampleValue(text, 'marketplace_deployments', { phase: 'build' }), 0);
      assert.equal(sampleValue(text, 'marketplace_deployments', { phase: 'deploy' }), 0);
      assert.equal((await market.call('POST', `/v1/services/${hosted}/publish`, { headers: developer.headers })).status, 200);
      const caller = await market.fundedCaller('1');
      assert.equal((await paidCall(caller, 'echo', hosted)).status, 200);
      assert.equal(sampleValue((await scrape()).text, 'marketplace_provider_duration_seconds_count', { hosting: 'hosted' }), 1);
    });

    test('/metrics wants the metrics bearer: 401 in the envelope without it or with a caller’s token', async () => {
      const caller = await market.caller();
      for (const bearer of [null, 'wrong', caller.token]) {
        const answer = await scrape(bearer);
        assert.equal(answer.status, 401, `with ${bearer}`);
        assert.equal(answer.json.error, 'unauthorized');
      }
    });
  });
}
