import { bearerHeader, handshake } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';

const transport = bearerHeader('sweep-transport-token-0123456789abcdef');

sweepServiceTests('scheduler', {
  env: { SCHEDULER_TOKEN: 'sweep-transport-token-0123456789abcdef', SCHEDULER_AGENT_AUTH_SECRET: 'sweep-agent-secret-0123456789abcdef' },
  credentials: async (service) => {
    const { token } = await handshake(service.url, transport);
    return { transportBearer: transport, principalToken: { 'x-scheduler-agent': token } };
  },
  samples: async (service, credentials) => {
    // An alarm of the sweep's agent, so the reads and the cancel reach a real row.
    const created = await fetch(`${service.url}/v1/alarms`, {
      method: 'POST',
      headers: { ...credentials.transportBearer, ...credentials.principalToken, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'once', wake_message: 'sweep', delay_seconds: 3600 }),
    });
    const { data } = (await created.json()) as { data: { id: string } };
    return { id: data.id };
  },
  bodies: { 'POST /v1/alarms': { kind: 'once', wake_message: 'sweep', delay_seconds: 60 } },
});
