import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { workspaceConnector } from '../src/connectors/workspace/definition.ts';
import { oauthClientFor } from '../src/oauth/settings.ts';
import { TokenEndpoint } from '../src/oauth/token-endpoint.ts';

const production = {
  NODE_ENV: 'production',
  PLATFORM_CONNECTOR_TOKEN: 't',
  CONNECTOR_AGENT_AUTH_SECRET: 's',
  CONNECTOR_VAULT_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
};

describe('OAuth settings', () => {
  test('defaults: Google’s endpoints, no client, the redirect URI under the local URL, 10 min state, 2 min margin', () => {
    const config = loadConfig({ PORT: '9094' });
    assert.equal(config.oauth.publicUrl, 'http://127.0.0.1:9094');
    assert.equal(config.oauth.stateTtlMs, 600_000);
    assert.equal(config.oauth.refreshMarginMs, 120_000);
    assert.throws(() => oauthClientFor(workspaceConnector, config.oauth), /CONNECTOR_GOOGLE_CLIENT_ID and CONNECTOR_GOOGLE_CLIENT_SECRET/);
    const client = oauthClientFor(workspaceConnector, loadConfig({ CONNECTOR_GOOGLE_CLIENT_ID: 'id', CONNECTOR_GOOGLE_CLIENT_SECRET: 'secret' }).oauth);
    assert.equal(client.authorizeUrl, 'https://accounts.google.com/o/oauth2/v2/auth');
    assert.equal(client.tokenUrl, 'https://oauth2.googleapis.com/token');
    assert.equal(client.revokeUrl, 'https://oauth2.googleapis.com/revoke');
    assert.equal(client.redirectUri, 'http://127.0.0.1:9094/v1/connect/callback');
  });

  test('overrides, and every limit at and past its edge', () => {
    const config = loadConfig({
      CONNECTOR_PUBLIC_URL: 'https://connector.example/',
      CONNECTOR_GOOGLE_CLIENT_ID: 'id',
      CONNECTOR_GOOGLE_CLIENT_SECRET: 'secret',
      CONNECTOR_GOOGLE_TOKEN_URL: 'http://127.0.0.1:1/token',
      CONNECTOR_STATE_TTL: '1m',
      CONNECTOR_REFRESH_MARGIN: '0',
    });
    assert.equal(oauthClientFor(workspaceConnector, config.oauth).redirectUri, 'https://connector.example/v1/connect/callback');
    assert.equal(oauthClientFor(workspaceConnector, config.oauth).tokenUrl, 'http://127.0.0.1:1/token');
    assert.equal(config.oauth.stateTtlMs, 60_000);
    assert.equal(config.oauth.refreshMarginMs, 0);
    assert.equal(loadConfig({ CONNECTOR_STATE_TTL: '1h' }).oauth.stateTtlMs, 3_600_000);
    assert.equal(loadConfig({ CONNECTOR_REFRESH_MARGIN: '30m' }).oauth.refreshMarginMs, 1_800_000);
    assert.throws(() => loadConfig({ CONNECTOR_STATE_TTL: '59s' }), /CONNECTOR_STATE_TTL/);
    assert.throws(() => loadConfig({ CONNECTOR_STATE_TTL: '61m' }), /CONNECTOR_STATE_TTL/);
    assert.throws(() => loadConfig({ CONNECTOR_REFRESH_MARGIN: '31m' }), /CONNECTOR_REFRESH_MARGIN/);
    assert.throws(() => loadConfig({ CONNECTOR_GOOGLE_CLIENT_ID: 'id' }), /CONNECTOR_GOOGLE_CLIENT_ID and CONNECTOR_GOOGLE_CLIENT_SECRET are set together/);
    assert.throws(() => loadConfig({ CONNECTOR_GOOGLE_TOKEN_URL: 'not a url' }), /CONNECTOR_GOOGLE_TOKEN_URL must be a URL/);
  });

  test('production: an https public URL is required, and every OAuth URL must be https; the secret is never in an error', () => {
    assert.throws(() => loadConfig(production), /CONNECTOR_PUBLIC_URL is required in production/);
    assert.throws(() => loadConfig({ ...production, CONNECTOR_PUBLIC_URL: 'http://connector.example' }), /CONNECTOR_PUBLIC_URL must use https:/);
    assert.throws(
      () => loadConfig({ ...production, CONNECTOR_PUBLIC_URL: 'https://c.example', CONNECTOR_GOOGLE_TOKEN_URL: 'http://token.example' }),
      /CONNECTOR_GOOGLE_TOKEN_URL must use https:/,
    );
    assert.throws(
      () => loadConfig({ ...production, CONNECTOR_PUBLIC_URL: 'https://c.example', CONNECTOR_GOOGLE_CLIENT_SECRET: 'very-secret-value' }),
      (error: Error) => !error.message.includes('very-secret-value'),
    );
    assert.equal(loadConfig({ ...production, CONNECTOR_PUBLIC_URL: 'https://c.example' }).oauth.publicUrl, 'https://c.example');
  });

  test('an unreachable token endpoint is `unavailable`, naming no secret', async () => {
    const client = {
      ...oauthClientFor(workspaceConnector, loadConfig({ CONNECTOR_GOOGLE_CLIENT_ID: 'id', CONNECTOR_GOOGLE_CLIENT_SECRET: 'secret-x' }).oauth),
    };
    const outcome = await new TokenEndpoint({ timeoutMs: 2_000 }).refresh({ ...client, tokenUrl: 'http://127.0.0.1:1/token' }, 'refresh-x');
    assert.deepEqual(outcome, { kind: 'unavailable', detail: 'could not be reached' });
  });
});
