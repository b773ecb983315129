import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { postgresBehindLink } from '@platform/testkit/database-outage';
import { drillAnswer, driveThroughOutage } from '@platform/testkit/outage-drill';
import { type IdentityProvider, startIdentityProvider, startRouter } from './harness.ts';

const behind = await postgresBehindLink();

describe('the router while its database goes away', { skip: behind ? false : 'needs TEST_DATABASE_URL', timeout: 60_000 }, () => {
  const { engine, outage, close } = behind ?? ({} as NonNullable<typeof behind>);
  let idp: IdentityProvider;
  let router: Awaited<ReturnType<typeof startRouter>>;
  before(async () => {
    idp = await startIdentityProvider();
    router = await startRouter(engine, idp);
  });
  after(async () => {
    outage.end();
    await router?.dispose();
    await idp?.close();
    await close();
  });

  test('defers invites and redemptions with 503 and Retry-After on both listeners, then serves again, and keeps every one it took', async () => {
    const shared = (await router.admin('POST', '/admin/invites', { uses: 10_000 })).json.data.code as string;
    const { acknowledged } = await driveThroughOutage<{ invite?: string; user?: string }>({
      outage,
      call: async (n) => {
        if (n % 2 === 0) {
          const created = await router.admin('POST', '/admin/invites', { note: `outage ${n}` });
          return { answer: drillAnswer(created), ack: { invite: created.json?.data?.code as string } };
        }
        // The public listener: a new user (the JWT checked against the identity provider) redeems the shared code.
        const token = await idp.token({ sub: randomUUID() });
        const redeemed = await router.call('POST', '/v/invites/redeem', token, { body: { code: shared } });
        return { answer: drillAnswer(redeemed), ack: { user: token } };
      },
    });
    const invites = new Set(((await router.admin('GET', '/admin/invites?limit=500')).json.data.invites as { code: string }[]).map((invite) => invite.code));
    for (const taken of acknowledged) {
      if (taken.invite !== undefined) assert.ok(invites.has(taken.invite), `invite ${taken.invite} is kept`);
      else assert.equal((await router.call('GET', '/v/me', taken.user as string)).json.data.invited, true, 'a user who redeemed is kept invited');
    }
  });
});
