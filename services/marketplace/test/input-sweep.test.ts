import { freePort } from '@platform/kit/free-port';
import { httpCall } from '@platform/testkit/http-call';
import { bearerHeader, handshake } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';
import { newAccount, testManifest } from './developer-fixtures.ts';

// Settlement is not started: the paid routes answer 503 payment_unavailable once past their checks of the input.
const noSettlement = 'settlement is not running in this sweep: a well-formed paid call or tab gets 503 payment_unavailable (retryable)';
const manifest = testManifest();

sweepServiceTests('marketplace', {
  env: {
    MARKETPLACE_AGENT_AUTH_SECRET: 'sweep-agent-secret-0123456789abcdef',
    MARKETPLACE_SETTLEMENT_URL: `http://127.0.0.1:${await freePort()}`,
    MARKETPLACE_RATE_AUTH: '1000/1000',
  },
  credentials: async (service) => {
    const caller = await handshake(service.url, {});
    const account = newAccount();
    const nonce = await httpCall(service.url, 'POST', '/v1/developers/nonce', { body: { address: account.address } });
    const message = nonce.json.data.message as string;
    const auth = await httpCall(service.url, 'POST', '/v1/developers/auth', { body: { message, signature: await account.signMessage({ message }) } });
    return {
      callerToken: bearerHeader(caller.token),
      callerDid: { 'x-caller-did': caller.key.did },
      developerToken: { 'x-developer-token': auth.json.data.token as string },
    };
  },
  samples: async (service, credentials) => {
    // A draft listing of the sweep's developer, so the owner routes reach a real row.
    const created = await httpCall(service.url, 'POST', '/v1/services', { headers: { ...credentials.developerToken }, body: { manifest } });
    return { id: created.json.data.id, service_id: created.json.data.id };
  },
  bodies: {
    'POST /v1/services': { manifest },
    'PATCH /v1/services/{id}': { manifest },
    'POST /v1/invoke/{service_id}': { operation: 'run', args: { text: 'sweep' } },
    'POST /v1/quote/{service_id}': { operation: 'run' },
    'POST /v1/channels': { service_id: '01a212a7-1f86-7f46-8e3a-d9fa65957714', deposit: '1.000000' },
    'POST /v1/streams': { service_id: '01a212a7-1f86-7f46-8e3a-d9fa65957714', operation: 'run', deposit: '1.000000' },
    'POST /v1/discover': { query: 'weather' },
  },
  allowedFailures: {
    'POST /v1/invoke/{service_id} 503': noSettlement,
    'POST /v1/channels 503': noSettlement,
    'POST /v1/streams 503': noSettlement,
  },
});
