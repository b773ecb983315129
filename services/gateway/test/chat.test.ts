import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import OpenAI from 'openai';
import { formatCredit } from '../src/metering/credit.ts';
import { callerHeaders, type Gateway, models, newActor, startGateway, today, unitsFor, upstreamKey } from './harness.ts';
import { upstreamErrorBody } from './upstream.ts';

const hello = [{ role: 'user' as const, content: 'hello' }];

for (const engine of testEngines()) {
  describe(`metered chat and embeddings on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    test('a whitelisted call is answered unchanged, debited from the reported usage, with the cost headers', async () => {
      const actor = newActor();
      const client = gw.client(
        callerHeaders(actor, 'compiler', { 'x-platform-intent-id': 'intent-1', 'x-platform-goal-id': 'goal-1', 'x-platform-kind-route': 'reason' }),
      );
      const { data, response } = await client.chat.completions.create({ model: models.small, messages: hello }).withResponse();
      assert.equal(data.choices[0]?.message.content, 'word1 word2 word3 word4 word5');
      assert.deepEqual(data.usage, { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
      // 7 input tokens at 1 USD/Mtok and 5 output tokens at 2 USD/Mtok, at 0.01 USD per credit.
      const cost = unitsFor(7, 1) + unitsFor(5, 2);
      assert.equal(formatCredit(cost), '0.001700000000');
      assert.equal(response.headers.get('x-platform-cost-credit'), '0.001700000000');
      assert.equal(response.headers.get('x-platform-daily-spent-credit'), '0.001700000000');
      assert.equal(response.headers.get('x-platform-daily-remaining-credit'), '9.998300000000');
      assert.equal(response.headers.get('x-platform-rate-table-version'), '1');
      assert.deepEqual(await gw.spend(actor), { spent: cost, reserved: 0n, calls: 1 });
      const [row] = await gw.ledger(actor);
      assert.deepEqual(
        [row?.day_text, row?.slot, row?.model, row?.kind, row?.rate_table_v, row?.input_tokens, row?.output_tokens, row?.cost_units, row?.basis],
        [today, 'compiler', models.small, 'chat', 1, 7, 5, cost, 'usage'],
      );
      assert.deepEqual([row?.intent_id, row?.goal_id, row?.kind_route], ['intent-1', 'goal-1', 'reason']);
    });

    test('the upstream gets the body, the upstream key and a max_tokens cap, never the gateway bearer or platform headers', async () => {
      const actor = newActor();
      const before = gw.upstream.received.length;
      await gw.client(callerHeaders(actor)).chat.completions.create({ model: models.small, messages: hello, temperature: 0.5, user: 'u-1' });
      const call = gw.upstream.received[before];
      assert.equal(call?.path, '/v1/chat/completions');
      assert.equal(call?.headers.authorization, `Bearer ${upstreamKey}`);
      assert.deepEqual(call?.body, { model: models.small, messages: hello, temperature: 0.5, user: 'u-1', max_tokens: 100 });
      assert.equal(call?.headers['x-platform-actor-did'], undefined);
      const named = gw.upstream.received.length;
      await gw.client(callerHeaders(actor)).chat.completions.create({ model: models.small, messages: hello, max_tokens: 7 });
      assert.equal(gw.upstream.received[named]?.body.max_tokens, 7, "the client's own cap goes as sent");
    });

    test('embeddings are priced on input tokens only', async () => {
      const actor = newActor();
      const { data, response } = await gw
        .client(callerHeaders(actor, 'executor'))
        .embeddings.create({ model: models.embed, input: 'embed me [prompt=40]' })
        .withResponse();
      assert.equal(data.data.length, 1);
      const cost = unitsFor(40, 1) / 2n; // 0.5 USD/Mtok
      assert.equal(response.headers.get('x-platform-cost-credit'), formatCredit(cost));
      const [row] = await gw.ledger(actor);
      assert.deepEqual([row?.kind, row?.input_tokens, row?.output_tokens, row?.cost_units], ['embedding', 40, 0, cost]);
      assert.equal(gw.upstream.received.at(-1)?.path, '/v1/embeddings');
    });

    test('a model outside the slot whitelist is 403 model_not_whitelisted and nothing is forwarded', async () => {
      const actor = newActor();
      const before = gw.upstream.received.length;
      const refusals: Array<[string, string]> = [
        ['compiler', models.coder],
        ['executor', models.small],
        ['planner', models.executor],
        ['compiler', models.offList],
      ];
      for (const [slot, model] of refusals) {
        const error = await gw
          .client(callerHeaders(actor, slot))
          .chat.completions.create({ model, messages: hello })
          .then(
            () => undefined,
            (caught: unknown) => caught,
          );
        assert.ok(error instanceof OpenAI.PermissionDeniedError, `${slot} ${model}`);
        assert.equal(error.code, 'model_not_whitelisted');
        assert.match(error.message, new RegExp(`${model}.*${slot}`));
      }
      const embedding = await gw.http('POST', '/v1/embeddings', { headers: callerHeaders(actor), body: { model: models.offList, input: 'x' } });
      assert.equal(embedding.status, 403);
      assert.equal(embedding.json.error.code, 'model_not_whitelisted');
      for (const [slot, model] of [
        ['compiler', models.large],
        ['planner', models.coder],
        ['planner', models.small],
        ['executor', models.coder],
      ]) {
        const answer = await gw.client(callerHeaders(actor, slot)).chat.completions.create({ model: model as string, messages: hello });
        assert.equal(answer.object, 'chat.completion', `${slot} may use ${model}`);
      }
      assert.equal(gw.upstream.received.length, before + 4);
      assert.equal((await gw.spend(actor)).calls, 4);
    });

    test('a model id not of the form accounts/<provider>/models/<model> is a 400 naming model', async () => {
      const response = await gw.http('POST', '/v1/chat/completions', { headers: callerHeaders(newActor()), body: { model: 'gpt-4o', messages: hello } });
      assert.equal(response.status, 400);
      assert.deepEqual([response.json.error.code, response.json.error.param, response.json.error.type], ['invalid_model', 'model', 'invalid_request_error']);
    });

    test('an upstream non-2xx answer is forwarded unchanged, status and body, and nothing is debited', async () => {
      const actor = newActor();
      for (const status of [400, 429, 500, 503]) {
        const response = await gw.http('POST', '/v1/chat/completions', {
          headers: callerHeaders(actor),
          body: { model: models.small, messages: [{ role: 'user', content: `[status=${status}]` }] },
        });
        assert.equal(response.status, status);
        assert.equal(response.text, upstreamErrorBody(status));
        assert.equal(response.headers.get('x-platform-cost-credit'), null);
      }
      const error = await gw
        .client(callerHeaders(actor))
        .chat.completions.create({ model: models.small, messages: [{ role: 'user', content: '[status=422]' }] })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      assert.ok(error instanceof OpenAI.UnprocessableEntityError);
      assert.equal(error.code, 'test_422', "the SDK surfaces the upstream's own error");
      const streamed = await gw.http('POST', '/v1/chat/completions', {
        headers: callerHeaders(actor),
        body: { model: models.small, stream: true, messages: [{ role: 'user', content: '[status=502]' }] },
      });
      assert.deepEqual([streamed.status, streamed.text], [502, upstreamErrorBody(502)]);
      assert.deepEqual(await gw.spend(actor), { spent: 0n, reserved: 0n, calls: 0 });
      assert.equal((await gw.ledger(actor)).length, 0);
    });

    test('an answer without usage is charged its reservation, never a guess', async () => {
      const actor = newActor();
      const { response } = await gw
        .client(callerHeaders(actor))
        .chat.completions.create({ model: models.small, messages: [{ role: 'user', content: '[no-usage]' }] })
        .withResponse();
      const [row] = await gw.ledger(actor);
      assert.equal(row?.basis, 'reservation');
      assert.equal(row?.output_tokens, 100, 'the output cap that was reserved');
      assert.ok((row?.input_tokens ?? 0) > 0);
      assert.equal(response.headers.get('x-platform-cost-credit'), formatCredit(row?.cost_units ?? 0n));
    });
  });
}
