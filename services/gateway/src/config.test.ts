import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '@platform/kit/config';
import { defaultModelIds } from '@platform/kit/model-labels';
import { loadConfig } from './config.ts';

describe('gateway settings', () => {
  test('defaults: port 9090, 10 credits a day, open with no upstream outside production', () => {
    const config = loadConfig({});
    assert.equal(config.port, 9090);
    assert.equal(config.defaultDailyCapUnits, 10_000_000_000_000n);
    assert.equal(config.upstreamUrl, undefined);
    assert.equal(config.gatewayToken, '');
    assert.equal(config.disabled, false);
    assert.deepEqual(config.models.pins, {});
    assert.equal(config.models.labels.M4, defaultModelIds.M4);
  });

  test('production needs the gateway bearer', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production' }), /PLATFORM_GATEWAY_TOKEN is required in production/);
    assert.equal(loadConfig({ NODE_ENV: 'production', PLATFORM_GATEWAY_TOKEN: 't' }).gatewayToken, 't');
  });

  test('pins take a label or an id of the slot, and nothing else', () => {
    const config = loadConfig({ PLATFORM_PLANNER_MODEL: 'M2', PLATFORM_EXECUTOR_MODEL: defaultModelIds.M4 });
    assert.deepEqual(config.models.pins, { planner: defaultModelIds.M2, executor: defaultModelIds.M4 });
    assert.throws(() => loadConfig({ PLATFORM_PLANNER_MODEL: 'M4' }), /PLATFORM_PLANNER_MODEL must be one of the planner slot's models/);
    assert.throws(() => loadConfig({ PLATFORM_EXECUTOR_MODEL: 'accounts/x/models/y' }), /PLATFORM_EXECUTOR_MODEL/);
  });

  test('each bad setting stops the start with one line naming it, without echoing secrets', () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ GATEWAY_UPSTREAM_URL: 'ftp://x' }, /GATEWAY_UPSTREAM_URL must use http: or https:/],
      [{ GATEWAY_UPSTREAM_URL: 'not a url with sk-secret' }, /^GATEWAY_UPSTREAM_URL must be a URL$/],
      [{ GATEWAY_DAILY_CAP_CREDIT: '-1' }, /GATEWAY_DAILY_CAP_CREDIT/],
      [{ GATEWAY_MODEL_M1: 'gpt-4o' }, /GATEWAY_MODEL_M1 must be a model id/],
      [{ GATEWAY_EMBEDDING_MODELS: 'a,b' }, /GATEWAY_EMBEDDING_MODELS/],
      [{ GATEWAY_UPSTREAM_MODEL_ID: 'bare' }, /GATEWAY_UPSTREAM_MODEL_ID must be full or short/],
      [{ PLATFORM_GATEWAY_DISABLED: 'maybe' }, /PLATFORM_GATEWAY_DISABLED must be true or false/],
      [{ GATEWAY_MAX_DRAINS: '-1' }, /GATEWAY_MAX_DRAINS/],
    ];
    for (const [env, message] of bad)
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
        JSON.stringify(env),
      );
  });

  test('a booking lingers 2 ms on PostgreSQL and 10 ms on PGlite by default for others to share its commit, 0 (none) to 1,000 ms', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://gateway@db.internal:5432/gateway' }).bookingLingerMs, 2);
    assert.equal(loadConfig({}).bookingLingerMs, 10);
    assert.deepEqual(
      ['0', '1000'].map((value) => loadConfig({ GATEWAY_BOOKING_LINGER_MS: value }).bookingLingerMs),
      [0, 1_000],
    );
    for (const value of ['-1', '1001', '1.5', 'soon']) assert.throws(() => loadConfig({ GATEWAY_BOOKING_LINGER_MS: value }), /GATEWAY_BOOKING_LINGER_MS/);
  });

  test('budget leases: a TTL of 3 s to an hour (30 s by default), slices of 0 to 1,000 calls (8 by default)', () => {
    assert.deepEqual([loadConfig({}).leaseTtlMs, loadConfig({}).leaseSliceCalls], [30_000, 8]);
    const edges = loadConfig({ GATEWAY_LEASE_TTL_MS: '3000', GATEWAY_LEASE_SLICE_CALLS: '0' });
    assert.deepEqual([edges.leaseTtlMs, edges.leaseSliceCalls], [3_000, 0]);
    const top = loadConfig({ GATEWAY_LEASE_TTL_MS: '3600000', GATEWAY_LEASE_SLICE_CALLS: '1000' });
    assert.deepEqual([top.leaseTtlMs, top.leaseSliceCalls], [3_600_000, 1_000]);
    for (const env of [
      { GATEWAY_LEASE_TTL_MS: '2999' },
      { GATEWAY_LEASE_TTL_MS: '3600001' },
      { GATEWAY_LEASE_SLICE_CALLS: '-1' },
      { GATEWAY_LEASE_SLICE_CALLS: '1001' },
    ])
      assert.throws(() => loadConfig(env), new RegExp(Object.keys(env)[0] as string), JSON.stringify(env));
  });

  test('a cap of 0 is a valid default (everyone blocked)', () => {
    assert.equal(loadConfig({ GATEWAY_DAILY_CAP_CREDIT: '0' }).defaultDailyCapUnits, 0n);
  });
});
