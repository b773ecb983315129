import { generateAgentKey } from '@platform/client/agent-key';
import { freePort } from '@platform/kit/free-port';
import { bearerHeader } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';

const token = 'sweep-contract-token-0123456789abcdef';
const agent = generateAgentKey();
const chainUrl = `http://127.0.0.1:${await freePort()}`;
const source = 'pragma solidity ^0.8.20; contract Sweep { uint256 public n; function set(uint256 v) external { n = v; } }';

sweepServiceTests('contracts', {
  // Its own chain node on a port of its own (a real anvil), so deploys and calls reach an EVM.
  env: { PLATFORM_CONTRACT_TOKEN: token, CONTRACTS_LOCAL_RPC_URL: chainUrl },
  startOptions: { timeoutMs: 120_000 },
  credentials: async () => ({ transportBearer: bearerHeader(token) }),
  samples: async (service) => {
    const compiled = await fetch(`${service.url}/v1/compile`, {
      method: 'POST',
      headers: { ...bearerHeader(token), 'x-platform-actor-did': agent.did, 'content-type': 'application/json' },
      body: JSON.stringify({ sources: { 'src/Sweep.sol': source } }),
    });
    const { data } = (await compiled.json()) as { data: { project_id: string } };
    return { project_id: data.project_id, name: 'Sweep', chain_id: 'local', 'x-platform-actor-did': agent.did };
  },
  bodies: {
    'POST /v1/compile': { sources: { 'src/Sweep.sol': source } },
    'POST /v1/test': { sources: { 'src/Sweep.sol': source } },
    'POST /v1/deploy': { idempotency_key: 'sweep', chain_id: 'local', contract: 'Sweep' },
    'POST /v1/call': { chain_id: 'local', to: '0x0000000000000000000000000000000000000001', method: 'n', contract: 'Sweep' },
    'POST /v1/simulate': { chain_id: 'local', to: '0x0000000000000000000000000000000000000001', data: '0x' },
    'POST /v1/chains': { id: 'sweep', name: 'Sweep', rpc_url: chainUrl, chain_id: 31337 },
    'POST /v1/chains/use': { id: 'local' },
    'POST /rpc': { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  },
  maxOpenCases: 25,
});
