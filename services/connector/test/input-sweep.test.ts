import { bearerHeader, handshake } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';

const transport = bearerHeader('sweep-connector-token-0123456789abcdef');

sweepServiceTests('connector', {
  env: { PLATFORM_CONNECTOR_TOKEN: 'sweep-connector-token-0123456789abcdef', CONNECTOR_AGENT_AUTH_SECRET: 'sweep-agent-secret-0123456789abcdef' },
  credentials: async (service) => {
    const { token } = await handshake(service.url, transport);
    return { transportBearer: transport, principalToken: { 'x-connector-agent': token } };
  },
  bodies: {
    'POST /v1/connect': { connector: 'workspace' },
    'POST /v1/disconnect': { connector: 'workspace' },
    'POST /v1/invoke': { connector: 'workspace', tool: 'mail_search', arguments: { query: 'sweep' } },
  },
});
