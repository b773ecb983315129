import { freePort } from '@platform/kit/free-port';
import { httpCall } from '@platform/testkit/http-call';
import { rawBody } from '@platform/testkit/input-sweep/cases';
import { bearerHeader, handshake } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';
import { newAccount, testManifest } from './developer-fixtures.ts';
import { hostedManifest, uploadBody, workerModules } from './hosted-fixtures.ts';

// Settlement is not started: the paid routes answer 503 payment_unavailable once past their checks of the input.
const noSettlement = 'settlement is not running in this sweep: a well-formed paid call or tab gets 503 payment_unavailable (retryable)';
const manifest = testManifest();
// The sample listing is hosted (no endpoint), so the hosted routes reach its artifact and deployment.
const hosted = hostedManifest();
const upload = await uploadBody({ main_module: 'main.js', bindings: [{ type: 'secret_text', name: 'API_KEY', text: 'sweep-secret' }] }, workerModules);
const uploadText = upload.body.toString('utf8');

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
    // A hosted draft listing of the sweep's developer with an artifact and a running deployment, so the owner and
    // hosted routes reach real rows.
    const created = await httpCall(service.url, 'POST', '/v1/services', { headers: { ...credentials.developerToken }, body: { manifest: hosted } });
    const id = created.json.data.id as string;
    const uploaded = await fetch(`${service.url}/v1/services/${id}/artifacts`, {
      method: 'POST',
      headers: { ...credentials.developerToken, 'content-type': upload.contentType },
      body: upload.body,
    });
    if (uploaded.status !== 201) throw new Error(`the sweep's upload failed: ${uploaded.status} ${await uploaded.text()}`);
    const deployed = await httpCall(service.url, 'POST', `/v1/services/${id}/deploy`, { headers: { ...credentials.developerToken }, body: {} });
    if (deployed.json.data?.status !== 'running') throw new Error(`the sweep's deployment failed: ${JSON.stringify(deployed.json)}`);
    return { id, service_id: id, deployment_id: deployed.json.data.id };
  },
  bodies: {
    'POST /v1/services': { manifest },
    'PATCH /v1/services/{id}': { manifest: hosted },
    'POST /v1/services/{id}/artifacts': rawBody(upload.contentType, uploadText),
    'POST /v1/services/{id}/deploy': {},
    'POST /v1/services/{id}/redeploy': {},
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
