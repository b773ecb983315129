import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import { assertBoundedLabels, assertDeclared, assertScrapeRefused, metricDeltas, metricValue } from '@platform/testkit/metrics-text';
import OpenAI from 'openai';
import { meteringSettled } from '../src/app.ts';
import { callerHeaders, type Gateway, models, newActor, startGateway } from './harness.ts';

const contract = [
  'gateway_calls_total',
  'gateway_credits_spent_total',
  'gateway_budget_refusals_total',
  'gateway_upstream_duration_seconds',
  'gateway_upstream_errors_total',
  'gateway_leases_held',
];

const ask = (content: string, model: string = models.small) => ({ model, messages: [{ role: 'user' as const, content }] });

for (const engine of testEngines()) {
  describe(`metrics on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    const read = async () => {
      const scraped = await gw.scrape();
      assert.equal(scraped.status, 200, scraped.text);
      return scraped.text;
    };
    const value = (text: string, name: string, labels: Record<string, string> = {}) => metricValue(text, name, labels) ?? 0;
    const refused = (promise: Promise<unknown>) =>
      promise.then(
        () => assert.fail('expected a refusal'),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.APIError);
          return error;
        },
      );

    test('/metrics needs the metrics bearer: 401 in the envelope without it, with a wrong one or with the gateway token', async () => {
      await assertScrapeRefused(gw.scrape, [null, 'Bearer wrong', 'Bearer test-gateway-token-5f1c']);
    });

    test('every gateway metric is there from the start', async () => {
      assertDeclared(await read(), contract);
    });

    test('a call counts by model, slot and outcome, its credits as its cost header says, its upstream time and a lease held', async () => {
      const actor = newActor();
      const before = await read();
      const { response } = await gw.client(callerHeaders(actor, 'planner')).chat.completions.create(ask('hi', models.large)).withResponse();
      const cost = Number(response.headers.get('x-platform-cost-credit'));
      const stream = await gw.client(callerHeaders(actor, 'planner')).chat.completions.create({ ...ask('[words=3]', models.large), stream: true });
      for await (const _chunk of stream);
      const during = await read();
      assert.ok(value(during, 'gateway_leases_held') >= 1, 'the actor’s slice is held while it calls');
      await meteringSettled(gw.app);
      const after = await read();
      const delta = metricDeltas(before, after);
      assert.equal(delta('gateway_calls_total', { model: models.large, slot: 'planner', outcome: 'ok' }), 2);
      assert.equal(delta('gateway_upstream_duration_seconds_count', { model: models.large }), 2);
      assert.ok(cost > 0);
      const spent = delta('gateway_credits_spent_total', { model: models.large, slot: 'planner' });
      assert.ok(spent > cost && spent < cost * 2 + 1e-9, `the whole call (${cost}) and the stream, booked: ${spent}`);
      assert.equal(value(after, 'gateway_leases_held'), 0, 'given back once the actor goes quiet');
    });

    test('refusals count their outcome: the budget (blocked), a model off the whitelist (as other), the upstream’s 5xx and 429', async () => {
      const actor = newActor();
      const client = gw.client(callerHeaders(actor));
      const before = await read();
      assert.equal((await refused(client.chat.completions.create(ask('[status=503]')))).status, 503);
      assert.equal((await refused(client.chat.completions.create(ask('[status=429]')))).status, 429);
      assert.equal((await refused(client.chat.completions.create(ask('hi', models.offList)))).status, 403);
      assert.equal((await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0' })).status, 200);
      assert.equal((await refused(client.chat.completions.create(ask('hi')))).code, 'budget_exhausted');
      const delta = metricDeltas(before, await read());
      const calls = (model: string, outcome: string) => delta('gateway_calls_total', { model, slot: 'compiler', outcome });
      assert.equal(calls(models.small, 'upstream_refused'), 2);
      assert.equal(calls('other', 'rejected'), 1, 'a model the gateway does not serve is `other`, never its name');
      assert.equal(calls(models.small, 'budget_exhausted'), 1);
      assert.equal(delta('gateway_upstream_errors_total', { model: models.small, kind: 'http_5xx' }), 1);
      assert.equal(delta('gateway_upstream_errors_total', { model: models.small, kind: 'http_429' }), 1);
      assert.equal(delta('gateway_budget_refusals_total', { reason: 'blocked' }), 1);
      assert.equal(delta('gateway_budget_refusals_total', { reason: 'daily_cap' }), 0);
      assert.equal(delta('gateway_credits_spent_total'), 0, 'nothing refused is charged');
    });

    test('a stream that ends on the upstream’s error event is an upstream failure of kind stream_error', async () => {
      const before = await read();
      const stream = await gw.client(callerHeaders(newActor())).chat.completions.create({ ...ask('[error-event]'), stream: true });
      await assert.rejects(async () => {
        for await (const _chunk of stream);
      });
      const delta = metricDeltas(before, await read());
      assert.equal(delta('gateway_calls_total', { model: models.small, outcome: 'upstream_failed' }), 1);
      assert.equal(delta('gateway_upstream_errors_total', { model: models.small, kind: 'stream_error' }), 1);
    });

    test('an upstream that does not answer in time counts a timeout and an upstream failure, whole or streamed', async () => {
      const before = await read();
      for (const stream of [false, true]) {
        const arrived = gw.upstream.received.length + 1;
        const pending = refused(gw.client(callerHeaders(newActor())).chat.completions.create({ ...ask('[hang]'), ...(stream ? { stream } : {}) }));
        await gw.upstream.waitFor(arrived);
        gw.clock.advance(gw.config.upstreamTimeoutMs);
        assert.equal((await pending).status, 504);
      }
      const delta = metricDeltas(before, await read());
      assert.equal(delta('gateway_upstream_errors_total', { model: models.small, kind: 'timeout' }), 2);
      assert.equal(delta('gateway_calls_total', { model: models.small, outcome: 'upstream_failed' }), 2);
      assert.equal(delta('gateway_upstream_duration_seconds_count'), 0, 'no answer, no duration');
    });

    test('label values are bounded: no actor DID, no model a caller made up', async () => {
      const actor = newActor();
      const made = 'accounts/someone/models/made-up-by-the-caller';
      await refused(gw.client(callerHeaders(actor)).chat.completions.create(ask('hi', made)));
      const text = await read();
      assert.doesNotMatch(text, new RegExp(actor));
      assert.doesNotMatch(text, /made-up-by-the-caller/);
      assertBoundedLabels(text);
    });
  });
}
