import { bearerHeader } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';

const token = 'sweep-memory-token-0123456789abcdef';

sweepServiceTests('memory', {
  env: { MEMORY_MCP_TOKEN: token },
  credentials: async () => ({ transportBearer: bearerHeader(token) }),
  samples: async (service) => {
    // A memory that exists, so the reads, history and forget reach a real row.
    const answer = await fetch(`${service.url}/v1/remember`, {
      method: 'POST',
      headers: { ...bearerHeader(token), 'content-type': 'application/json' },
      body: JSON.stringify({ memories: [{ content: 'the sweep was here' }] }),
    });
    const { data } = (await answer.json()) as { data: { memories: Array<{ id: string }> } };
    return { id: data.memories[0]?.id };
  },
  bodies: {
    'POST /v1/remember': { memories: [{ content: 'sweep' }] },
    'POST /v1/recall': { query: 'sweep' },
    'POST /v1/search': { query: 'sweep' },
    'POST /mcp': { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  },
});
