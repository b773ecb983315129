import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { eventually } from '@platform/testkit/eventually';
import { httpCall } from '@platform/testkit/http-call';
import { startTestChain, type TestChain } from '@platform/testkit/test-chain';
import type { Address, Hex } from 'viem';
import { withdrawalKey } from '../src/balances/withdrawal-tree.ts';
import { vaultAbi } from '../src/chain/vault-contracts.ts';
import { bindingBody, type Clients, chainClients, newWallet, tokenBalance } from './chain-helpers.ts';
import { evmKeyHex } from './harness.ts';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';

let chain: TestChain;
let clients: Clients;
let dataDir: string;
before(async () => {
  chain = await startTestChain();
  clients = chainClients(chain);
  dataDir = mkdtempSync(join(tmpdir(), 'settlement-chain-crash-'));
});
after(async () => {
  await chain.setAutomine(true);
  await chain.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The real service in a process of its own, on the test chain, development mode (it deploys its vault). */
function startService(): Promise<ServiceProcess> {
  return startServiceProcess({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    SETTLEMENT_DEV: 'true',
    SETTLEMENT_RPC_URL: chain.url,
    SETTLEMENT_EVM_KEY: evmKeyHex,
    SETTLEMENT_CHAIN_POLL_MS: '20',
    SETTLEMENT_AGENT_AUTH_SECRET: 'chain-crash-test-secret',
  });
}

/** Transactions from `address` waiting in the node's pool (automine is off while they wait). */
async function pendingFrom(address: string): Promise<Array<{ hash: Hex; input: Hex }>> {
  const pool = await chain.rpc<{ pending: Record<string, Record<string, { hash: Hex; input: Hex }>> }>('txpool_content');
  const mine = Object.entries(pool.pending).find(([from]) => from.toLowerCase() === address.toLowerCase())?.[1] ?? {};
  return Object.values(mine);
}

test('SIGKILL after an anchor and after a payout were broadcast, then restarts: anchored once, paid once', async () => {
  let service = await startService();
  try {
    const key = generateAgentKey();
    const challenge = (await httpCall(service.url, 'POST', '/v1/agent/auth/challenge', { body: { did: key.did } })).json.data;
    const verified = await httpCall(service.url, 'POST', '/v1/agent/auth/verify', {
      body: { did: key.did, public_key: key.publicKeyHex, nonce: challenge.nonce, signature: key.sign(challenge.message) },
    });
    const headers = { 'x-ledger-agent': verified.json.data.token as string };
    const funded = await httpCall(service.url, 'POST', '/v1/dev/faucet', { headers, body: { amount: '100' } });
    assert.equal(funded.status, 200, funded.text);
    assert.ok(funded.json.data.deposit, `the faucet answers once its deposit is credited: ${funded.text}`);
    const wallet = await newWallet(chain, clients);
    assert.equal((await httpCall(service.url, 'POST', '/v1/account/evm', { headers, body: await bindingBody(wallet, key.did, 31337) })).status, 200);
    const withdrawal = (await httpCall(service.url, 'POST', '/v1/withdraw', { headers, body: { amount: '40' } })).json.data.withdrawal;
    const info = (await httpCall(service.url, 'GET', '/v1/info')).json.data;
    const sequencer = info.chain.sequencer_address as string;
    const vault = info.vault_address as Address;

    // The anchor is broadcast and waits in the pool; the process dies before it can record it landing.
    await chain.setAutomine(false);
    assert.equal((await httpCall(service.url, 'POST', '/v1/settle', { headers })).status, 200);
    await eventually(async () => (await pendingFrom(sequencer)).length === 1, 'the anchor is in the pool', 100_000);
    await service.kill('SIGKILL');
    await chain.mine(1);

    // Restarted: it finds the anchor on chain instead of sending another, then broadcasts the payout; killed again.
    service = await startService();
    await eventually(async () => (await pendingFrom(sequencer)).length === 1, 'the payout is in the pool', 100_000);
    const [payout] = await pendingFrom(sequencer);
    assert.match(payout?.input ?? '', /^0x/);
    await service.kill('SIGKILL');
    await chain.mine(1);
    await chain.setAutomine(true);

    service = await startService();
    await eventually(
      async () => (await httpCall(service.url, 'GET', `/v1/withdrawal/${withdrawal.id}`)).json.data.withdrawal.status === 'confirmed',
      'the payout is recorded after the restart',
      200_000,
    );
    const anchors = await clients.client.getContractEvents({ address: vault, abi: vaultAbi, eventName: 'Anchored', fromBlock: 0n });
    assert.deepEqual(
      anchors.map((log) => log.args.batch),
      [1n],
      'batch 1 anchored exactly once',
    );
    const payouts = await clients.client.getContractEvents({ address: vault, abi: vaultAbi, eventName: 'WithdrawalPaid', fromBlock: 0n });
    assert.deepEqual(
      payouts.map((log) => log.args.withdrawalId),
      [withdrawalKey(withdrawal.id)],
      'paid exactly once',
    );
    assert.equal(await tokenBalance(clients, info.token_address, wallet.account.address), 40_000_000n);
    const batch = (await httpCall(service.url, 'GET', '/v1/batches')).json.data.batches[0];
    assert.deepEqual([batch.anchor.status, batch.anchor.tx_hash], ['confirmed', anchors[0]?.transactionHash]);
    const read = (await httpCall(service.url, 'GET', `/v1/withdrawal/${withdrawal.id}`)).json.data.withdrawal;
    assert.equal(read.tx_hash, payouts[0]?.transactionHash);
    assert.deepEqual(await pendingFrom(sequencer), [], 'nothing else was sent');
    const supply = (await httpCall(service.url, 'GET', '/v1/supply')).json.data;
    assert.deepEqual([supply.supply, supply.reserve, supply.in_flight_withdrawals], ['60.000000', '60.000000', '0.000000']);
  } finally {
    await service.kill('SIGKILL');
  }
});
