import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, type Env } from '@platform/kit/config';
import { loadConfig } from './config.ts';

/** Runs loadConfig, asserts it refused with a ConfigError, and returns the message. */
function refusal(env: Env): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail(`expected ${JSON.stringify(env)} to be refused`);
}

const embeddings = {
  MEMORY_EMBEDDINGS_URL: 'http://gateway.local:8080/v1',
  MEMORY_EMBEDDINGS_MODEL: 'text-embedding-3-small',
  MEMORY_EMBEDDINGS_DIMENSIONS: '1536',
};

describe('memory server configuration', () => {
  it('starts from an empty environment on port 4242, English text search, keyword retrieval only', () => {
    const config = loadConfig({});
    assert.equal(config.service, 'memory');
    assert.equal(config.port, 4242);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, '.data/memory');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.token, '');
    assert.equal(config.textSearchConfig, 'english');
    assert.equal(config.embeddings, undefined);
    assert.equal(config.recencyHalfLifeDays, 30);
    assert.ok(Object.isFrozen(config));
  });

  it('reads the token, port, text search configuration and recency half-life', () => {
    const config = loadConfig({
      MEMORY_MCP_TOKEN: 'secret-token',
      PORT: '5000',
      MEMORY_TEXT_SEARCH_CONFIG: 'simple',
      MEMORY_RECENCY_HALF_LIFE_DAYS: '7',
      DATABASE_URL: 'postgres://memory@db:5432/platform',
    });
    assert.equal(config.token, 'secret-token');
    assert.equal(config.port, 5000);
    assert.equal(config.textSearchConfig, 'simple');
    assert.equal(config.recencyHalfLifeDays, 7);
    assert.equal(config.databaseUrl, 'postgres://memory@db:5432/platform');
    assert.equal(loadConfig({ MEMORY_TEXT_SEARCH_CONFIG: '' }).textSearchConfig, 'english', 'empty counts as unset');
  });

  it('refuses to run in production without MEMORY_MCP_TOKEN, and runs there with one', () => {
    assert.match(refusal({ NODE_ENV: 'production' }), /MEMORY_MCP_TOKEN is required in production/);
    assert.match(refusal({ NODE_ENV: 'production', MEMORY_MCP_TOKEN: '' }), /MEMORY_MCP_TOKEN/);
    assert.equal(loadConfig({ NODE_ENV: 'production', MEMORY_MCP_TOKEN: 'a-long-token' }).token, 'a-long-token');
    assert.equal(loadConfig({ NODE_ENV: 'development' }).token, '', 'outside production an open server is allowed');
  });

  it('refuses a MEMORY_TEXT_SEARCH_CONFIG that cannot name a text search configuration', () => {
    for (const bad of ['English', 'english; drop table memories', 'pg_catalog.english', '1english', 'a'.repeat(64), 'ger-man']) {
      const message = refusal({ MEMORY_TEXT_SEARCH_CONFIG: bad });
      assert.match(message, /MEMORY_TEXT_SEARCH_CONFIG must name a text search configuration/);
    }
    for (const good of ['german', 'simple', 'my_config_2', `a${'b'.repeat(62)}`])
      assert.equal(loadConfig({ MEMORY_TEXT_SEARCH_CONFIG: good }).textSearchConfig, good);
  });

  it('reads the embedding settings, without the trailing slash of the URL and with a default timeout', () => {
    const config = loadConfig({ ...embeddings, MEMORY_EMBEDDINGS_URL: 'https://gateway.local/v1//', MEMORY_EMBEDDINGS_API_KEY: 'sk-embed' });
    assert.deepEqual(config.embeddings, {
      url: 'https://gateway.local/v1',
      apiKey: 'sk-embed',
      model: 'text-embedding-3-small',
      dimensions: 1536,
      timeoutMs: 10_000,
    });
    assert.ok(Object.isFrozen(config.embeddings));
    const keyless = loadConfig({ ...embeddings, MEMORY_EMBEDDINGS_TIMEOUT_MS: '2500' }).embeddings;
    assert.equal(keyless?.apiKey, '');
    assert.equal(keyless?.timeoutMs, 2500);
    assert.equal(keyless?.url, 'http://gateway.local:8080/v1');
    assert.equal(loadConfig({ MEMORY_EMBEDDINGS_URL: '' }).embeddings, undefined, 'an empty URL leaves embeddings off');
  });

  it('refuses embeddings without a model or dimensions, naming the setting', () => {
    assert.match(
      refusal({ MEMORY_EMBEDDINGS_URL: embeddings.MEMORY_EMBEDDINGS_URL, MEMORY_EMBEDDINGS_DIMENSIONS: '64' }),
      /MEMORY_EMBEDDINGS_MODEL is required/,
    );
    assert.match(
      refusal({ MEMORY_EMBEDDINGS_URL: embeddings.MEMORY_EMBEDDINGS_URL, MEMORY_EMBEDDINGS_MODEL: 'm' }),
      /MEMORY_EMBEDDINGS_DIMENSIONS is required/,
    );
    assert.match(refusal({ ...embeddings, MEMORY_EMBEDDINGS_DIMENSIONS: '' }), /MEMORY_EMBEDDINGS_DIMENSIONS is required/);
  });

  it('refuses a URL that is not http(s), without echoing a URL that may carry a password', () => {
    const message = refusal({ ...embeddings, MEMORY_EMBEDDINGS_URL: 'not a url, password hunter2' });
    assert.match(message, /MEMORY_EMBEDDINGS_URL must be a URL/);
    assert.ok(!message.includes('hunter2'));
    assert.match(refusal({ ...embeddings, MEMORY_EMBEDDINGS_URL: 'ftp://files.local/v1' }), /MEMORY_EMBEDDINGS_URL must use http: or https:/);
  });

  it('refuses numbers out of range or not whole, naming the setting and its range', () => {
    const cases: [Env, RegExp][] = [
      [{ ...embeddings, MEMORY_EMBEDDINGS_DIMENSIONS: '0' }, /MEMORY_EMBEDDINGS_DIMENSIONS must be an integer from 1 to 4000, got "0"/],
      [{ ...embeddings, MEMORY_EMBEDDINGS_DIMENSIONS: '4001' }, /MEMORY_EMBEDDINGS_DIMENSIONS must be an integer from 1 to 4000/],
      [{ ...embeddings, MEMORY_EMBEDDINGS_DIMENSIONS: '1536.5' }, /MEMORY_EMBEDDINGS_DIMENSIONS must be an integer/],
      [{ ...embeddings, MEMORY_EMBEDDINGS_DIMENSIONS: 'many' }, /MEMORY_EMBEDDINGS_DIMENSIONS must be an integer/],
      [{ ...embeddings, MEMORY_EMBEDDINGS_TIMEOUT_MS: '99' }, /MEMORY_EMBEDDINGS_TIMEOUT_MS must be an integer from 100 to 120000/],
      [{ ...embeddings, MEMORY_EMBEDDINGS_TIMEOUT_MS: '120001' }, /MEMORY_EMBEDDINGS_TIMEOUT_MS must be an integer from 100 to 120000/],
      [{ MEMORY_RECENCY_HALF_LIFE_DAYS: '0' }, /MEMORY_RECENCY_HALF_LIFE_DAYS must be an integer from 1 to 36500/],
      [{ MEMORY_RECENCY_HALF_LIFE_DAYS: '36501' }, /MEMORY_RECENCY_HALF_LIFE_DAYS must be an integer from 1 to 36500/],
      [{ PORT: '65536' }, /PORT must be an integer from 0 to 65535/],
      [{ LOG_LEVEL: 'chatty' }, /LOG_LEVEL must be one of/],
    ];
    for (const [env, expected] of cases) assert.match(refusal(env), expected);
    // The edges themselves are accepted.
    assert.equal(loadConfig({ ...embeddings, MEMORY_EMBEDDINGS_DIMENSIONS: '1' }).embeddings?.dimensions, 1);
    assert.equal(loadConfig({ ...embeddings, MEMORY_EMBEDDINGS_DIMENSIONS: '4000' }).embeddings?.dimensions, 4000);
    assert.equal(loadConfig({ ...embeddings, MEMORY_EMBEDDINGS_TIMEOUT_MS: '100' }).embeddings?.timeoutMs, 100);
    assert.equal(loadConfig({ ...embeddings, MEMORY_EMBEDDINGS_TIMEOUT_MS: '120000' }).embeddings?.timeoutMs, 120_000);
    assert.equal(loadConfig({ MEMORY_RECENCY_HALF_LIFE_DAYS: '36500' }).recencyHalfLifeDays, 36_500);
  });
});
