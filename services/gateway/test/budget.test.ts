import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testEngines } from '@platform/testkit/databases';
import OpenAI, { type APIError } from 'openai';
import { formatCredit } from '../src/metering/credit.ts';
import { callerHeaders, type Gateway, models, newActor, startGateway } from './harness.ts';

const ask = (content: string, maxTokens?: number) => ({
  model: models.small,
  messages: [{ role: 'user' as const, content }],
  ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
});

async function refusal(promise: Promise<unknown>): Promise<APIError> {
  const outcome = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  assert.ok(outcome instanceof OpenAI.APIError, 'expected the call to be refused');
  return outcome;
}

for (const engine of testEngines()) {
  describe(`daily budget on ${engine.name}`, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(engine);
    });
    after(async () => gw.close());

    test('over the cap: 429 budget_exhausted with spent_credit and limit_credit as decimal strings, and nothing forwarded', async () => {
      const actor = newActor();
      assert.equal((await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0.05' })).status, 200);
      const client = gw.client(callerHeaders(actor));
      const spentHeaders: string[] = [];
      let refused: APIError | undefined;
      for (let i = 0; i < 10 && !refused; i++) {
        try {
          const { response } = await client.chat.completions.create(ask('[prompt=100][words=10]', 10)).withResponse();
          spentHeaders.push(response.headers.get('x-platform-daily-spent-credit') ?? '');
        } catch (error) {
          refused = error as APIError;
        }
      }
      // Each call costs 0.012 and reserves about 0.0204 first: three fit under 0.05, the fourth's reservation does not.
      assert.deepEqual(spentHeaders, ['0.012000000000', '0.024000000000', '0.036000000000']);
      assert.ok(refused instanceof OpenAI.RateLimitError);
      assert.equal(refused.code, 'budget_exhausted');
      assert.equal(refused.type, 'insufficient_quota');
      const fields = refused.error as { spent_credit: string; limit_credit: string };
      assert.deepEqual([fields.spent_credit, fields.limit_credit], ['0.036000000000', '0.050000000000']);
      assert.equal(refused.headers?.get('x-should-retry'), 'false', 'SDKs must not retry a spent budget');
      assert.equal(gw.upstream.received.filter((call) => call.body.messages?.[0]?.content === '[prompt=100][words=10]').length, 3);
      assert.deepEqual(await gw.spend(actor), { spent: 36_000_000_000n, reserved: 0n, calls: 3 });
    });

    test('a call whose output cap alone is over the cap is refused even at zero spend', async () => {
      const actor = newActor();
      await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0.01' });
      const error = await refusal(gw.client(callerHeaders(actor)).chat.completions.create(ask('hi', 1000)));
      assert.equal(error.status, 429);
      assert.match(error.message, /lower max_tokens/);
      assert.deepEqual((error.error as Record<string, string>).spent_credit, '0.000000000000');
    });

    test('a cap of 0 blocks the actor at once; removing the override restores the default', async () => {
      const actor = newActor();
      const client = gw.client(callerHeaders(actor));
      await client.chat.completions.create(ask('hi'));
      await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0' });
      const forwarded = gw.upstream.received.length;
      const error = await refusal(client.chat.completions.create(ask('hi')));
      assert.deepEqual([error.status, error.code, (error.error as Record<string, string>).limit_credit], [429, 'budget_exhausted', '0.000000000000']);
      assert.match(error.message, /blocked/);
      assert.equal(gw.upstream.received.length, forwarded);
      await gw.admin('DELETE', `/actors/${actor}/cap`);
      const { response } = await client.chat.completions.create(ask('hi')).withResponse();
      assert.equal(response.headers.get('x-platform-daily-remaining-credit'), formatCredit(10_000_000_000_000n - (await gw.spend(actor)).spent));
    });

    test('the day is the UTC day of the injected clock: a new day starts from zero and the old day keeps its total', async () => {
      const actor = newActor();
      await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: '0.02' });
      const client = gw.client(callerHeaders(actor));
      await client.chat.completions.create(ask('[prompt=100]', 5));
      await refusal(client.chat.completions.create(ask('[prompt=100]', 5)));
      const dayOne = await gw.spend(actor);
      gw.clock.set('2026-03-02T00:00:00.000Z');
      try {
        const { response } = await client.chat.completions.create(ask('[prompt=100]', 5)).withResponse();
        assert.equal(response.headers.get('x-platform-daily-spent-credit'), response.headers.get('x-platform-cost-credit'));
        assert.deepEqual(await gw.spend(actor), dayOne, 'the first day is unchanged');
        assert.equal((await gw.spend(actor, '2026-03-02')).calls, 1);
      } finally {
        gw.clock.set('2026-03-01T12:00:00.000Z');
      }
    });

    test('200 parallel calls by one actor against a small cap: spent never passes the cap, the rest get 429, nothing leaks', async () => {
      const actor = newActor();
      const capUnits = 100_000_000_000n; // 0.1 credit
      await gw.admin('PUT', `/actors/${actor}/cap`, { limit_credit: formatCredit(capUnits) });
      const client = gw.client(callerHeaders(actor));
      const forwarded = gw.upstream.received.length;
      // Each call reports 0.016 of usage: 200 of them would spend 3.2 credits, 32 times the cap.
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, () =>
          client.chat.completions.create(ask('[prompt=150][words=5] parallel', 5)).then(
            () => 200,
            (error: unknown) => (error instanceof OpenAI.APIError ? (error.status ?? 0) : 0),
          ),
        ),
      );
      const served = outcomes.filter((status) => status === 200).length;
      const refused = outcomes.filter((status) => status === 429).length;
      assert.equal(served + refused, 200, `only 200s and 429s: ${[...new Set(outcomes)].join(', ')}`);
      assert.ok(served >= 1 && refused >= 150, `served ${served}, refused ${refused}`);
      const totals = await gw.spend(actor);
      assert.ok(totals.spent <= capUnits, `spent ${formatCredit(totals.spent)} is within the cap`);
      assert.equal(totals.reserved, 0n, 'every reservation was settled or released');
      const rows = await gw.ledger(actor);
      assert.equal(rows.length, served);
      assert.equal(
        rows.reduce((sum, row) => sum + row.cost_units, 0n),
        totals.spent,
      );
      assert.equal(gw.upstream.received.length - forwarded, served, 'refused calls never reached the upstream');
    });
  });
}
