import { randomBytes } from 'node:crypto';
import { generateAgentKey } from '@platform/client/agent-key';
import { httpCall } from '@platform/testkit/http-call';
import { bearerHeader, handshake } from '@platform/testkit/input-sweep/credentials';
import { sweepServiceTests } from '@platform/testkit/input-sweep/service-sweep';

const ledgerToken = 'sweep-ledger-token-0123456789abcdef';
const operatorToken = 'sweep-operator-token-0123456789abcdef';
const transport = bearerHeader(ledgerToken);
const payee = generateAgentKey().did;
// Settlement runs without a chain here: what needs one (a withdrawal's payout) says so with 503, retryable.
const noChain = 'no chain is configured in this sweep: the chain-backed part answers 503 unavailable (retryable)';

sweepServiceTests('settlement', {
  env: {
    LEDGER_TOKEN: ledgerToken,
    SETTLEMENT_OPERATOR_TOKEN: operatorToken,
    SETTLEMENT_AGENT_AUTH_SECRET: 'sweep-agent-secret-0123456789abcdef',
    SETTLEMENT_RATE_READ: '100000/100000',
    SETTLEMENT_RATE_WRITE: '100000/100000',
    SETTLEMENT_RATE_AUTH: '100000/100000',
  },
  credentials: async (service) => {
    const { key, token } = await handshake(service.url, transport);
    // A balance to pay and hold from, credited as the deposit watcher would.
    const deposit = { did: key.did, amount: '100.000000', tx_hash: `0x${randomBytes(32).toString('hex')}`, log_index: 0 };
    await httpCall(service.url, 'POST', '/v1/operator/deposits', { bearer: operatorToken, body: deposit });
    return { transportBearer: transport, principalToken: { 'x-ledger-agent': token }, operatorBearer: bearerHeader(operatorToken) };
  },
  samples: async () => ({ did: payee, to: payee }),
  bodies: {
    'POST /v1/pay': { to: payee, amount: '0.000001' },
    'POST /v1/hold': { to: payee, amount: '0.000001' },
    'POST /v1/withdraw': { amount: '0.000001' },
    'POST /v1/operator/deposits': { did: payee, amount: '1.000000', tx_hash: `0x${'ab'.repeat(32)}`, log_index: 1 },
  },
  allowedFailures: { 'POST /v1/withdraw 503': noChain, 'POST /v1/settle 503': noChain, 'POST /v1/account/evm 503': noChain },
});
