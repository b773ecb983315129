import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { type TestEngine, testEngines } from '@platform/testkit/databases';
import type { TestChain } from '@platform/testkit/test-chain';
import pino from 'pino';
import { type Address, encodeFunctionData, type Hex } from 'viem';
import { accountHash } from '../src/balances/balance-tree.ts';
import { tokenAbi } from '../src/chain/vault-contracts.ts';
import {
  approveVault,
  bindingBody,
  type Clients,
  depositOnChain,
  mint,
  newWallet,
  readVault,
  tokenBalance,
  untilQuiet,
  useTestChain,
} from './chain-helpers.ts';
import { type Settlement, startSettlement } from './harness.ts';

const units = (n: number) => BigInt(n) * 1_000_000n;

let chain: TestChain;
let clients: Clients;
const { dataDir } = useTestChain('settlement-chain-', (node, viem) => {
  chain = node;
  clients = viem;
});

for (const engine of testEngines()) {
  describe(`the ledger on a live chain, ${engine.name}`, () => {
    let s: Settlement;
    afterEach(async () => s?.close());

    test('deposit on chain → balance → pay → withdraw → tokens at the payout address; anchors and receipts show the chain', async () => {
      s = await startSettlement(engine, { chain: { rpcUrl: chain.url, dataDir: dataDir() } });
      const live = s.live as NonNullable<Settlement['live']>;
      const info = (await s.call('GET', '/v1/info')).body.data;
      assert.equal(info.chain_id, 31337, 'the chain id is the node’s');
      assert.equal(info.anchor_address, info.vault_address, 'the vault stores the anchors');
      assert.match(info.token_address, /^0x[0-9a-fA-F]{40}$/);
      assert.equal(info.chain.mode, 'live');

      const alice = await s.agent();
      const bob = await s.agent();
      const wallet = await newWallet(chain, clients);
      const instructions = (await s.call('GET', '/v1/deposit', { token: alice.token })).body.data;
      assert.equal(instructions.vault_address, info.vault_address);
      assert.equal(instructions.claim.call, 'deposit(uint256 amount, bytes32 didHash)');
      await mint(clients, instructions.token_address, wallet.account.address, units(100));
      const { index } = await depositOnChain(clients, wallet, instructions, units(100));
      assert.equal(index, 0n);
      await live.runPass();
      const balance = (await s.call('GET', '/v1/balance', { token: alice.token })).body.data;
      assert.equal(balance.balance, '100.000000');
      const [deposit] = (await s.call('GET', `/v1/transfers?did=${encodeURIComponent(alice.did)}`)).body.data.transfers;
      assert.equal(deposit.kind, 'deposit');
      assert.match(deposit.ref, /^0x[0-9a-f]{64}:\d+$/, 'the deposit receipt names the chain event');

      assert.equal((await s.call('POST', '/v1/pay', { token: alice.token, body: { to: bob.did, amount: '30' } })).status, 200);
      const bound = await s.call('POST', '/v1/account/evm', { token: alice.token, body: await bindingBody(wallet, alice.did, 31337) });
      assert.equal(bound.status, 200, JSON.stringify(bound.body));
      const withdrawn = await s.call('POST', '/v1/withdraw', { token: alice.token, body: { amount: '50' } });
      assert.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));
      const settled = (await s.call('POST', '/v1/settle', { token: alice.token })).body.data.batch;
      assert.equal(settled.anchor.status, 'recorded');

      // The batch written nudges the loop; passes anchor it and pay the withdrawal.
      await untilQuiet(s);
      const batch = (await s.call('GET', `/v1/batch/${settled.id}`)).body.data;
      assert.equal(batch.anchor.status, 'confirmed', JSON.stringify(batch.anchor));
      assert.match(batch.anchor.tx_hash, /^0x[0-9a-f]{64}$/);
      assert.ok(batch.anchor.block_number > 0 && batch.anchor.gas_used > 21_000);
      const vault = info.vault_address as Address;
      assert.equal(await readVault(clients, vault, 'lastBatch'), BigInt(batch.number));
      assert.equal(await readVault(clients, vault, 'lastBalanceRoot'), batch.balance_root, 'the anchored balance root is the batch’s');
      assert.equal(await readVault(clients, vault, 'lastLogRoot'), batch.log_root, 'the anchored log root is the batch’s');
      assert.equal(await readVault(clients, vault, 'lastLogSize'), BigInt(batch.log_size));
      const anchor = (await s.call('GET', `/v1/anchor/${batch.log_root}`)).body.data;
      assert.deepEqual([anchor.status, anchor.tx_hash, anchor.block_number], ['confirmed', batch.anchor.tx_hash, batch.anchor.block_number]);

      assert.equal(await tokenBalance(clients, instructions.token_address, wallet.account.address), units(50), 'the payout reached the bound address');
      const receipt = (await s.call('GET', `/v1/receipt/${withdrawn.body.data.seq}`)).body.data;
      assert.equal(receipt.withdrawal.status, 'confirmed', 'the withdraw receipt says the payout landed');
      assert.match(receipt.withdrawal.tx_hash, /^0x[0-9a-f]{64}$/);
      assert.equal(receipt.batch.anchor.status, 'confirmed');
      const onChain = await clients.client.getTransactionReceipt({ hash: receipt.withdrawal.tx_hash as Hex });
      assert.equal(onChain.status, 'success');

      const supply = (await s.call('GET', '/v1/supply')).body.data;
      assert.equal(supply.supply, '50.000000');
      assert.equal(supply.reserve, '50.000000');
      assert.equal(supply.in_flight_withdrawals, '0.000000');
      assert.equal(supply.fully_reserved, true, JSON.stringify(supply));
      assert.equal(supply.last_check.ok, true);
      const health = (await s.call('GET', '/healthz')).body.data;
      assert.deepEqual([health.status, health.chain.mode, health.chain.frozen, health.chain.alarm], ['ok', 'live', false, undefined]);
    });
  });
}

describe('the deposit watcher and the reserve check', () => {
  const pglite = testEngines()[0] as TestEngine;
  let s: Settlement;
  afterEach(async () => s?.close());

  test('a reorg shallower than the confirmations never reaches the ledger; the deposit that replaces it is credited once', async () => {
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir(), confirmations: 3 } });
    const live = s.live as NonNullable<Settlement['live']>;
    const alice = await s.agent();
    const wallet = await newWallet(chain, clients);
    const instructions = (await s.call('GET', '/v1/deposit', { token: alice.token })).body.data;
    await mint(clients, instructions.token_address, wallet.account.address, units(20));
    await approveVault(clients, wallet, instructions, units(20));
    const beforeDeposit = await chain.snapshot();
    await depositOnChain(clients, wallet, instructions, units(10), { approve: false });
    await chain.mine(1);
    // Two passes: the reserve is checked at the block the previous pass took deposits through.
    await live.runPass();
    await live.runPass();
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '0.000000', 'two blocks are not three');
    const waiting = (await s.call('GET', '/v1/supply')).body.data;
    assert.deepEqual([waiting.uncredited_deposits, waiting.fully_reserved], ['10.000000', true]);

    await chain.revert(beforeDeposit);
    await chain.mine(5);
    await live.runPass();
    assert.equal(
      (await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance,
      '0.000000',
      'the deposit the reorg removed was never credited',
    );
    const { index } = await depositOnChain(clients, wallet, instructions, units(7), { approve: false });
    assert.equal(index, 0n, 'the replacing deposit takes the same vault index');
    await chain.mine(1);
    await live.runPass();
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '0.000000');
    await chain.mine(1);
    await live.runPass();
    await live.runPass();
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '7.000000');
    const credits = await s.database.db.selectFrom('deposits').selectAll().execute();
    assert.deepEqual(
      credits.map((row) => [row.chain_index, row.amount]),
      [[0n, 7_000_000n]],
      'credited once',
    );
    const health = (await s.call('GET', '/healthz')).body.data;
    assert.equal(health.status, 'ok', JSON.stringify(health));
  });

  test('a deposit naming a DID the ledger does not know waits unclaimed, counted against the reserve, and is credited once the DID asks', async () => {
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir() } });
    const live = s.live as NonNullable<Settlement['live']>;
    const info = (await s.call('GET', '/v1/info')).body.data;
    const alice = await s.agent();
    const wallet = await newWallet(chain, clients);
    const unasked = { vault_address: info.vault_address, token_address: info.token_address, claim: { did_hash: accountHash(alice.did) as Hex } };
    await mint(clients, info.token_address, wallet.account.address, units(20));
    await depositOnChain(clients, wallet, unasked, units(12));
    await live.runPass();
    await live.runPass();
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '0.000000');
    const waiting = (await s.call('GET', '/v1/supply')).body.data;
    assert.equal(waiting.last_check.unclaimed_deposits, '12.000000');
    assert.equal(waiting.fully_reserved, true, JSON.stringify(waiting));

    await s.call('GET', '/v1/deposit', { token: alice.token });
    await live.runPass();
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '12.000000');
    await depositOnChain(clients, wallet, unasked, units(3));
    await live.runPass();
    await live.runPass();
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '15.000000');
    const settled = (await s.call('GET', '/v1/supply')).body.data;
    assert.deepEqual(
      [settled.supply, settled.reserve, settled.last_check.unclaimed_deposits, settled.fully_reserved],
      ['15.000000', '15.000000', '0.000000', true],
    );

    // The watcher is the only way in: the operator's door is shut while the vault is live.
    const operator = await s.call('POST', '/v1/operator/deposits', {
      bearer: 'test-operator-token',
      body: { did: alice.did, amount: '5', tx_hash: `0x${'ab'.repeat(32)}`, log_index: 0 },
    });
    assert.deepEqual([operator.status, operator.body.error?.reason], [409, 'chain_watcher']);
  });

  test('the faucet deposits on chain; a credit the vault does not back, seen on two checks, raises the alarm and stops deposit credits', async () => {
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir() } });
    const live = s.live as NonNullable<Settlement['live']>;
    const alice = await s.fundedAgent('10');
    const faucetCredit = (await s.call('GET', `/v1/transfers?did=${encodeURIComponent(alice.did)}`)).body.data.transfers[0];
    assert.match(faucetCredit.ref, /^0x[0-9a-f]{64}:\d+$/, 'the faucet made a real vault deposit');
    assert.equal((await s.call('GET', '/v1/supply')).body.data.reserve, '10.000000');

    // A bug that credits without a deposit behind it. The first check that disagrees is read again next pass (a
    // node may name a block before serving all its state); the disagreement stays, so the second raises the alarm.
    await s.database.db.updateTable('accounts').set({ balance: 11_000_000n }).where('did', '=', alice.did).execute();
    await live.runPass();
    await live.runPass();
    const health = (await s.call('GET', '/healthz')).body.data;
    assert.equal(health.status, 'alarm');
    assert.match(health.chain.alarm, /supply and reserve disagree at block \d+: shortfall 1\.000000/);
    const supply = (await s.call('GET', '/v1/supply')).body.data;
    assert.deepEqual([supply.fully_reserved, supply.last_check.shortfall], [false, '1.000000']);

    const wallet = await newWallet(chain, clients);
    const instructions = (await s.call('GET', '/v1/deposit', { token: alice.token })).body.data;
    await mint(clients, instructions.token_address, wallet.account.address, units(5));
    await depositOnChain(clients, wallet, instructions, units(5));
    await live.runPass();
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '11.000000', 'no credit while the alarm stands');
  });

  test('tokens leaving the vault behind its counters (a token that seizes or burns) raise the alarm, logged', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir() }, logger });
    const live = s.live as NonNullable<Settlement['live']>;
    await s.fundedAgent('10');
    const info = (await s.call('GET', '/v1/info')).body.data;
    const whole = (await s.call('GET', '/v1/supply')).body.data;
    assert.deepEqual([whole.reserve, whole.vault_tokens, whole.fully_reserved], ['10.000000', '10.000000', true]);

    // The vault's own counters still say 10; the token moves 4 out of it as only its contract could (impersonated here).
    await seizeFromVault(info.vault_address, info.token_address, units(4));
    const seized = (await s.call('GET', '/v1/supply')).body.data;
    assert.deepEqual([seized.reserve, seized.vault_tokens, seized.fully_reserved], ['10.000000', '6.000000', false], 'seen at once by /v1/supply');
    // The exact check is at the block the watcher has taken deposits through: the next pass moves it past the seizure,
    // the one after sees the shortfall (a doubt, read again), the third raises the alarm.
    for (let pass = 0; pass < 3; pass++) await live.runPass();
    const health = (await s.call('GET', '/healthz')).body.data;
    assert.equal(health.status, 'alarm');
    assert.match(health.chain.alarm, /the vault holds 6\.000000 tokens at block \d+ but owes 10\.000000/);
    const supply = (await s.call('GET', '/v1/supply')).body.data;
    assert.deepEqual([supply.fully_reserved, supply.last_check.token_shortfall, supply.alarm], [false, '4.000000', health.chain.alarm]);
    const fatal = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 60);
    assert.equal(fatal.length, 1, 'the alarm is logged once');
    assert.match(fatal[0].msg, /the vault holds 6\.000000 tokens/);
  });

  test('a fresh ledger on a quiet chain owes nothing: fully reserved before the watcher passes the vault’s block', async () => {
    // Six confirmations and a node that makes blocks only for transactions: the vault's block is not deep enough yet.
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir(), confirmations: 6 } });
    const supply = (await s.call('GET', '/v1/supply')).body.data;
    assert.deepEqual([supply.supply, supply.last_check, supply.fully_reserved], ['0.000000', null, true], JSON.stringify(supply));
    assert.equal((await s.call('GET', '/healthz')).body.data.status, 'ok');
  });
});

/** Moves tokens out of the vault by sending the token's transfer as the vault itself (anvil impersonates it). */
async function seizeFromVault(vault: Address, token: Address, micros: bigint): Promise<void> {
  await chain.rpc('anvil_impersonateAccount', [vault]);
  await chain.setBalance(vault, 10n ** 18n);
  const data = encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [`0x${'5e'.repeat(20)}`, micros] });
  const hash = await chain.rpc<Hex>('eth_sendTransaction', [{ from: vault, to: token, data }]);
  await chain.rpc('anvil_stopImpersonatingAccount', [vault]);
  const receipt = await clients.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  assert.equal(receipt.status, 'success');
}
