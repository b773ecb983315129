import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deriveTokenKey, mintPrincipalToken } from '@platform/kit/auth/principal-token';
import { unixSeconds } from '@platform/kit/clock';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { driveThroughOutage } from '@platform/testkit/outage-drill';
import { agentAuthSecret } from './harness.ts';
import { startWorkspace, type Workspace } from './workspace.ts';

const behind = await postgresBehindLink();

describe('the connector while its database goes away', { skip: behind ? false : 'needs TEST_DATABASE_URL', timeout: 60_000 }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let w: Workspace;
  before(async () => {
    w = await startWorkspace(engine);
  });
  after(async () => {
    outage.end();
    await w?.close();
    await close();
  });

  test('defers tool calls and connect flows with 503 and Retry-After, then serves again, and every flow it began can be finished', async () => {
    const user = await w.connectedUser();
    // A user of its own for each flow (no handshake, which needs the database): a user may have ten flows open.
    const tokenOf = (owner: string) =>
      mintPrincipalToken(deriveTokenKey(agentAuthSecret, 'connector'), { did: user.key.did, owner, expiresAt: unixSeconds(w.s.clock.now()) + 600 });
    const { acknowledged } = await driveThroughOutage({
      outage,
      call: async (n) => {
        // A tool call reads the sealed credential; a connect writes its flow's state.
        const answer =
          n % 2 === 0
            ? await w.invoke(user.token, 'mail_search', { query: 'outage' })
            : await w.s.call('POST', '/v1/connect', { token: tokenOf(`outage-user-${n}`), body: { connector: 'google-workspace' } });
        const retryAfter = answer.headers['retry-after'];
        return {
          answer: { status: answer.status, retryAfter: retryAfter === undefined ? undefined : String(retryAfter), body: answer.body },
          ack: n % 2 === 1 ? (answer.body.data?.authorization_url as string) : undefined,
        };
      },
    });
    for (const url of acknowledged)
      assert.equal((await w.callback(await w.oauth.authorize(url))).status, 200, 'a flow begun before or after the outage finishes');
  });
});
