import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createServiceMetrics } from '@platform/kit/observability/metrics';
import { testEngines } from '@platform/testkit/databases';
import { assertBoundedLabels, metricFamilies, metricValue } from '@platform/testkit/metrics-text';
import { connectorMetrics } from '../src/metrics.ts';
import { startWorkspace, type Workspace } from './workspace.ts';

const metricsToken = 'connector-metrics-token-for-this-test';

for (const engine of testEngines()) {
  describe(`connector metrics on ${engine.name}`, () => {
    let w: Workspace;
    before(async () => {
      w = await startWorkspace(engine, { metrics: { metrics: createServiceMetrics('connector'), metricsToken } });
    });
    after(() => w.close());

    const scrape = (bearer: string | null = metricsToken) => w.s.call('GET', '/metrics', { bearer });

    test('GET /metrics is 401 in the envelope without the metrics bearer, and with the transport bearer', async () => {
      for (const bearer of [null, 'wrong', undefined]) {
        const answer = await w.s.call('GET', '/metrics', bearer === undefined ? {} : { bearer });
        assert.equal(answer.status, 401, `bearer ${bearer}`);
        assert.equal(answer.body.error?.code, 'unauthorized');
      }
    });

    test('every connector metric is there from the start, at zero', async () => {
      const text = (await scrape()).text;
      const families = metricFamilies(text);
      for (const [name, type] of [
        ['connector_tool_calls_total', 'counter'],
        ['connector_refreshes_total', 'counter'],
        ['connector_reconnects_needed', 'gauge'],
        ['http_requests_total', 'counter'],
        ['db_query_duration_seconds', 'histogram'],
      ] as const)
        assert.equal(families.get(name), type, name);
      // The names connectorMetrics registers are the ones served (deploy/observability's checks call it alone).
      const alone = createServiceMetrics('connector');
      connectorMetrics(alone);
      for (const name of metricFamilies(await alone.render()).keys()) assert.ok(families.has(name), name);
    });

    test('tool calls by tool and outcome, refreshes by outcome, and the connections needing a reconnect', async () => {
      const before = (await scrape()).text;
      const count = (text: string, tool: string, outcome: string) => metricValue(text, 'connector_tool_calls_total', { tool, outcome }) ?? 0;
      const user = await w.connectedUser();
      assert.equal((await w.invoke(user.token, 'calendar_list', {})).status, 200);
      assert.equal((await w.invoke(user.token, 'calendar_list', {})).status, 200);
      // Refused at a gate: a consequential tool without its confirmation, and a tool no connector has.
      assert.equal((await w.invoke(user.token, 'mail_send', { to: ['a@example.com'], subject: 's', body: 'b' })).status, 409);
      assert.equal((await w.invoke(user.token, `did:key:z6Mk${'x'.repeat(20)}`, {})).status, 404);
      // Google refuses the call (a 404 of its own): past the gates, the provider's refusal.
      w.google.failNext({ path: /\/events$/ }, { status: 404, reason: 'notFound' });
      assert.equal((await w.invoke(user.token, 'calendar_list', {})).status, 404);
      // A user whose grant is revoked: the refresh is refused (invalid_grant), the connection needs a reconnect.
      const revoked = await w.oauthUser();
      const credential = await w.stored(revoked.owner);
      assert.ok(credential);
      w.s.clock.set(new Date(credential.expiresAt.getTime() - 1_000));
      assert.equal(await w.oauth.revoke(credential.refreshToken), 200);
      assert.equal((await w.invoke(revoked.token, 'calendar_list', {})).status, 409);
      const refreshed = await w.oauthUser();
      const fresh = await w.stored(refreshed.owner);
      assert.ok(fresh);
      w.s.clock.set(new Date(fresh.expiresAt.getTime() - 1_000));
      assert.equal((await w.invoke(refreshed.token, 'calendar_list', {})).status, 200);

      const answer = await scrape();
      assert.equal(answer.status, 200);
      const text = answer.text;
      assert.equal(count(text, 'calendar_list', 'ok') - count(before, 'calendar_list', 'ok'), 3);
      assert.equal(count(text, 'mail_send', 'refused') - count(before, 'mail_send', 'refused'), 1);
      assert.equal(count(text, 'other', 'refused') - count(before, 'other', 'refused'), 1);
      assert.equal(count(text, 'calendar_list', 'provider_refused') - count(before, 'calendar_list', 'provider_refused'), 1);
      assert.equal(count(text, 'calendar_list', 'needs_reconnect') - count(before, 'calendar_list', 'needs_reconnect'), 1);
      const refreshes = (outcome: string, t: string) => metricValue(t, 'connector_refreshes_total', { outcome }) ?? 0;
      assert.equal(refreshes('invalid_grant', text) - refreshes('invalid_grant', before), 1);
      assert.equal(refreshes('ok', text) - refreshes('ok', before), 1);
      assert.equal(metricValue(text, 'connector_reconnects_needed'), 1);
      assert.ok((metricValue(text, 'http_requests_total', { route: '/v1/invoke', status_class: '2xx' }) ?? 0) >= 3);
      assert.ok((metricValue(text, 'db_query_duration_seconds_count', { outcome: 'ok' }) ?? 0) > 0);
      assertBoundedLabels(text);
      assert.doesNotMatch(text, /did:|z6Mk|@example\.com/);
    });
  });
}
