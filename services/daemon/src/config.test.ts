import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultModelIds } from '@platform/kit/model-labels';
import { loadConfig } from './config.ts';

const error = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (caught) {
    return (caught as Error).message;
  }
  return undefined;
};

describe('daemon settings', () => {
  test('defaults: port 8080, the spec’s version 1 models, open services left out', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.deepEqual(config.models, {
      compiler: defaultModelIds.M1,
      compilerEscalation: defaultModelIds.M2,
      planner: defaultModelIds.M2,
      executor: defaultModelIds.M4,
    });
    assert.deepEqual(
      [config.gateway, config.memory, config.contracts, config.scheduler, config.settlement, config.marketplace, config.mcpServers],
      [undefined, undefined, undefined, undefined, undefined, undefined, []],
    );
    assert.equal(config.gateTimeoutMs, 900_000);
    assert.equal(config.asyncStrategy, 'enqueue');
  });

  test('the marketplace link has no bearer: its callers identify by the DID handshake', () => {
    assert.deepEqual(loadConfig({ PLATFORM_MARKETPLACE_URL: 'http://127.0.0.1:9098/' }).marketplace, { url: 'http://127.0.0.1:9098', token: '' });
    assert.equal(error({ PLATFORM_MARKETPLACE_URL: 'ftp://market' }), 'PLATFORM_MARKETPLACE_URL must use http: or https:, got "ftp:"');
  });

  test('models as labels or ids, within each slot’s whitelist', () => {
    const config = loadConfig({
      PLATFORM_PLANNER_MODEL: 'M3',
      GATEWAY_MODEL_M3: 'accounts/acme/models/m3',
      PLATFORM_EXECUTOR_MODEL: 'accounts/acme/models/m3',
    });
    assert.deepEqual([config.models.planner, config.models.executor], ['accounts/acme/models/m3', 'accounts/acme/models/m3']);
    assert.match(error({ PLATFORM_EXECUTOR_MODEL: 'M1' }) ?? '', /PLATFORM_EXECUTOR_MODEL must be one of the executor slot's models/);
    assert.match(error({ PLATFORM_COMPILER_MODEL: 'gpt' }) ?? '', /PLATFORM_COMPILER_MODEL must be a label M1–M4 or a model id/);
  });

  test('production needs the user id, the agent key and the bearer, unless DAEMON_DEV', () => {
    assert.match(error({ NODE_ENV: 'production' }) ?? '', /DAEMON_USER_ID is required in production/);
    assert.match(error({ NODE_ENV: 'production', DAEMON_USER_ID: 'u1' }) ?? '', /DAEMON_AGENT_KEY is required/);
    assert.match(error({ NODE_ENV: 'production', DAEMON_USER_ID: 'u1', DAEMON_AGENT_KEY: 'a'.repeat(64) }) ?? '', /PLATFORM_DAEMON_TOKEN is required/);
    assert.equal(error({ NODE_ENV: 'production', DAEMON_DEV: 'true' }), undefined);
  });

  test('a bad setting stops the start with one line naming it, and never echoes a URL', () => {
    assert.match(error({ DAEMON_AGENT_KEY: 'xyz' }) ?? '', /^DAEMON_AGENT_KEY must be 64 hex/);
    assert.match(error({ DAEMON_USER_ID: 'has space' }) ?? '', /^DAEMON_USER_ID must be/);
    assert.equal(error({ PLATFORM_GATEWAY_URL: 'ftp://user:secret@host' }), 'PLATFORM_GATEWAY_URL must use http: or https:, got "ftp:"');
    assert.equal(error({ PLATFORM_MEMORY_URL: 'not a url secret' }), 'PLATFORM_MEMORY_URL must be a URL');
    assert.match(error({ DAEMON_ASYNC_STRATEGY: 'rollback' }) ?? '', /DAEMON_ASYNC_STRATEGY must be one of enqueue, reject, interrupt/);
    assert.match(error({ DAEMON_GATE_TIMEOUT_SECONDS: '0' }) ?? '', /DAEMON_GATE_TIMEOUT_SECONDS must be an integer from 1/);
    assert.match(error({ DAEMON_HEARTBEAT_SECONDS: '30' }) ?? '', /DAEMON_HEARTBEAT_SECONDS must be an integer from 1 to 29/);
  });

  test('DAEMON_MCP_SERVERS: HTTP or stdio, own names, only named settings passed to a child', () => {
    const config = loadConfig({
      PATH: '/usr/bin',
      SECRET: 'no',
      CONNECTOR_TOKEN: 'yes',
      DAEMON_MCP_SERVERS: JSON.stringify([
        { name: 'connector', command: 'node', args: ['proxy.js'], env_pass: ['CONNECTOR_TOKEN'] },
        { name: 'board', url: 'http://127.0.0.1:7000/mcp', token_env: 'CONNECTOR_TOKEN' },
      ]),
    });
    assert.deepEqual(config.mcpServers[0], {
      name: 'connector',
      transport: 'stdio',
      command: 'node',
      args: ['proxy.js'],
      env: { PATH: '/usr/bin', CONNECTOR_TOKEN: 'yes' },
    });
    assert.deepEqual(config.mcpServers[1], { name: 'board', transport: 'http', url: 'http://127.0.0.1:7000/mcp', token: 'yes' });
    const servers = (value: unknown) => error({ DAEMON_MCP_SERVERS: JSON.stringify(value) });
    assert.equal(error({ DAEMON_MCP_SERVERS: '{' }), 'DAEMON_MCP_SERVERS must be a JSON array of servers');
    assert.match(servers([{ name: 'memory', url: 'http://x' }]) ?? '', /name "memory" is one of the daemon's own/);
    assert.match(servers([{ name: 'a', url: 'http://x', command: 'y' }]) ?? '', /exactly one of url/);
    assert.match(servers([{ name: 'a', url: 'http://x', extra: 1 }]) ?? '', /unknown field "extra"/);
    assert.match(
      servers([
        { name: 'a', url: 'http://x' },
        { name: 'a', url: 'http://y' },
      ]) ?? '',
      /names "a" twice/,
    );
    assert.match(servers(Array.from({ length: 17 }, (_, index) => ({ name: `s${index}`, url: 'http://x' }))) ?? '', /at most 16/);
    assert.equal(servers(Array.from({ length: 16 }, (_, index) => ({ name: `s${index}`, url: 'http://x' }))), undefined);
  });
});
