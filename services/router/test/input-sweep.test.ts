import { after, before } from 'node:test';
import { freePort } from '@platform/kit/free-port';
import { bearerHeader } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';
import { adminToken, audience, daemonRoot, type IdentityProvider, startIdentityProvider, wakeToken } from './harness.ts';

let idp: IdentityProvider;
before(async () => {
  idp = await startIdentityProvider();
});
after(() => idp.close());

const [publicPort, internalPort] = [await freePort(), await freePort()];

// Both listeners: the public front door (identity-provider JWTs) and the internal one (admin and wake tokens). The
// sweep's user holds no invite, so the proxy answers it without starting a daemon.
sweepServiceTests('router', {
  get env() {
    return {
      IDP_URL: idp.url,
      ROUTER_IDP_AUDIENCE: audience,
      ROUTER_ADDR: `127.0.0.1:${publicPort}`,
      ROUTER_INTERNAL_ADDR: `127.0.0.1:${internalPort}`,
      ROUTER_ADMIN_TOKEN: adminToken,
      ROUTER_WAKE_TOKEN: wakeToken,
      PLATFORM_DAEMON_TOKEN: daemonRoot,
    };
  },
  listeners: () => [`http://127.0.0.1:${publicPort}`, `http://127.0.0.1:${internalPort}`],
  credentials: async () => ({
    identityProviderJwt: bearerHeader(await idp.token()),
    adminToken: bearerHeader(adminToken),
    wakeToken: bearerHeader(wakeToken),
  }),
  bodies: {
    'POST /admin/users': { idp_user_id: '01a212a7-1f86-7f46-8e3a-d9fa65957714' },
    'POST /admin/invites': { note: 'sweep' },
  },
});
