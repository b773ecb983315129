import { after, before } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { bearerHeader } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';
import { adminToken, gatewayToken, models, testEnv } from './harness.ts';
import { startUpstream, type Upstream } from './upstream.ts';

let upstream: Upstream;
before(async () => {
  upstream = await startUpstream();
});
after(() => upstream.close());

const actor = generateAgentKey().did;
const chat = { model: models.small, messages: [{ role: 'user', content: 'sweep' }], max_tokens: 5 };

sweepServiceTests('gateway', {
  get env() {
    return { ...(testEnv as Record<string, string>), GATEWAY_UPSTREAM_URL: upstream.url };
  },
  credentials: async () => ({ gatewayToken: bearerHeader(gatewayToken), adminToken: bearerHeader(adminToken) }),
  samples: async () => ({ 'x-platform-actor-did': actor, 'x-platform-slot': 'compiler', actor, model: models.small }),
  bodies: {
    'POST /v1/chat/completions': chat,
    'POST /v1/embeddings': { model: models.embed, input: 'sweep' },
    'PUT /v1/admin/actors/{actor}/cap': { limit_credit: '5.000000000000' },
  },
});
