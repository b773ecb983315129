import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestEngine, testEngines } from '@platform/testkit/databases';
import { capturingLogger, transportToken } from './harness.ts';
import { connectStateBinding, unsealVerifier } from './oauth-inspect.ts';
import { clientSecret, connectorId, startWorkspace, type Workspace } from './workspace.ts';

const engine = testEngines()[0] as TestEngine;

describe('the OAuth paths leak no secret', () => {
  const capture = capturingLogger();
  let w: Workspace;
  before(async () => {
    w = await startWorkspace(engine, { logger: capture.logger });
  });
  after(() => w.close());

  test('connect, callbacks of every kind, refresh, a refused refresh, disconnect: no secret in a response or a log line', async () => {
    const texts: string[] = [];
    const secrets: string[] = [clientSecret, transportToken];
    const agent = await w.s.agent();
    secrets.push(agent.token);

    const { begun, url, params } = await w.begin(agent.token);
    const verifier = await unsealVerifier(w, params.state as string, connectStateBinding(agent.owner, connectorId));
    assert.match(verifier, /^[A-Za-z0-9_-]{43}$/);
    secrets.push(verifier);
    const back = await w.oauth.authorize(url.toString());
    secrets.push(back.code as string, back.state as string);
    texts.push((await w.callback(back)).text, (await w.callback(back)).text);
    assert.ok(begun.text.includes(params.state as string), 'the URL for the owner carries the state; nothing else may');

    // A reused code, a provider error, a missing refresh token, a failing token endpoint.
    const reuse = await w.oauth.authorize((await w.begin(agent.token)).url.toString());
    secrets.push(reuse.code as string);
    await w.oauth.consumeCode(reuse.code as string);
    texts.push((await w.callback(reuse)).text);
    w.oauth.issueRefreshTokens = false;
    const noRefresh = await w.oauth.authorize((await w.begin(agent.token)).url.toString());
    secrets.push(noRefresh.code as string);
    texts.push((await w.callback(noRefresh)).text);
    w.oauth.issueRefreshTokens = true;

    const credential = await w.stored(agent.owner);
    assert.ok(credential);
    secrets.push(credential.accessToken, credential.refreshToken);
    w.s.clock.set(new Date(credential.expiresAt.getTime() - 1_000));
    texts.push((await w.invoke(agent.token, 'calendar_list', {})).text);
    const refreshed = await w.stored(agent.owner);
    secrets.push(refreshed?.accessToken as string);
    w.oauth.failNext('token', 500);
    w.google.failNext({ path: /\/events$/ }, { status: 401, reason: 'authError' });
    texts.push((await w.invoke(agent.token, 'calendar_list', {})).text);
    texts.push((await w.s.call('POST', '/v1/disconnect', { token: agent.token, body: { connector: connectorId } })).text);

    // A refused refresh (invalid_grant) marks a second user's connection.
    const other = await w.oauthUser();
    const otherCredential = await w.stored(other.owner);
    assert.ok(otherCredential);
    secrets.push(otherCredential.accessToken, otherCredential.refreshToken);
    await w.oauth.revoke(otherCredential.refreshToken);
    w.s.clock.set(new Date(otherCredential.expiresAt.getTime() - 1_000));
    texts.push((await w.invoke(other.token, 'calendar_list', {})).text);

    const logged = capture.text();
    assert.match(logged, /connect callback/);
    assert.match(logged, /credential refreshed/);
    assert.match(logged, /marked needs_reconnect/);
    const output = `${texts.join('\n')}\n${logged}`;
    for (const secret of secrets) assert.ok(secret && !output.includes(secret), `output holds ${secret.slice(0, 6)}…`);
    assert.doesNotMatch(texts.join('\n'), /access_token|refresh_token|code_verifier|client_secret/i);
  });
});
