import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { type TestEngine, testEngines } from '@platform/testkit/databases';
import type { TestChain } from '@platform/testkit/test-chain';
import { type Address, encodeAbiParameters, type Hex, keccak256, zeroAddress } from 'viem';
import { vaultAbi } from '../src/chain/vault-contracts.ts';
import { bindingBody, type Clients, depositOnChain, mint, newWallet, readVault, tokenBalance, untilQuiet, useTestChain } from './chain-helpers.ts';
import { type Settlement, startSettlement } from './harness.ts';

const units = (n: number) => BigInt(n) * 1_000_000n;
const pglite = testEngines()[0] as TestEngine;

let chain: TestChain;
let clients: Clients;
const { dataDir } = useTestChain('settlement-escape-', (node, viem) => {
  chain = node;
  clients = viem;
});

/** The development token's balance slot of `owner` (OpenZeppelin ERC20: `_balances` is the first variable). */
const balanceSlot = (owner: Address) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [owner, 0n]));

/** Takes the vault's tokens away (the vault's own count stays): its next payout cannot transfer. Returns the undo. */
async function emptyVault(token: Address, vault: Address): Promise<() => Promise<void>> {
  const slot = balanceSlot(vault);
  const before = await chain.rpc<Hex>('eth_getStorageAt', [token, slot, 'latest']);
  await chain.rpc('anvil_setStorageAt', [token, slot, `0x${'0'.repeat(64)}`]);
  return async () => {
    await chain.rpc('anvil_setStorageAt', [token, slot, before]);
  };
}

async function reverts(call: Promise<unknown>, error: RegExp): Promise<void> {
  await assert.rejects(call, (thrown: Error) => {
    assert.match(String((thrown as { shortMessage?: string }).shortMessage ?? thrown.message) + String(thrown.message), error);
    return true;
  });
}

describe('the escape hatch and the sender, on a live chain', () => {
  let s: Settlement;
  afterEach(async () => s?.close());

  test('the sequencer stops anchoring; a user freezes the vault, finishes an anchored withdrawal and claims the last anchored balance: never more than owed', async () => {
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir(), forceWithdrawDelaySeconds: 3_600 } });
    const live = s.live as NonNullable<Settlement['live']>;
    const alice = await s.agent();
    const bob = await s.agent();
    const wallet = await newWallet(chain, clients);
    const instructions = (await s.call('GET', '/v1/deposit', { token: alice.token })).body.data;
    const vault = instructions.vault_address as Address;
    const token = instructions.token_address as Address;
    await mint(clients, token, wallet.account.address, units(100));
    await depositOnChain(clients, wallet, instructions, units(100));
    await live.runPass();
    await s.call('POST', '/v1/account/evm', { token: alice.token, body: await bindingBody(wallet, alice.did, 31337) });
    await s.call('POST', '/v1/pay', { token: alice.token, body: { to: bob.did, amount: '10' } });

    // Batch 1 burns 20 and is anchored, but its payout cannot go through before everything stops.
    const first = (await s.call('POST', '/v1/withdraw', { token: alice.token, body: { amount: '20' } })).body.data.withdrawal;
    const refill = await emptyVault(token, vault);
    await s.call('POST', '/v1/settle', { token: alice.token });
    await untilQuiet(s);
    assert.equal(await readVault(clients, vault, 'lastBatch'), 1n);
    const failed = (await s.call('GET', `/v1/withdrawal/${first.id}`)).body.data;
    assert.equal(failed.withdrawal.status, 'failed');
    assert.equal(failed.anchored, true);
    await refill();

    // The sequencer stops. Batch 2 burns 40 and is never anchored.
    await live.stop();
    await s.call('POST', '/v1/withdraw', { token: alice.token, body: { amount: '40' } });
    const second = (await s.call('POST', '/v1/settle', { token: alice.token })).body.data.batch;
    assert.equal(second.number, 2);
    assert.equal((await s.call('GET', '/v1/balance', { token: alice.token })).body.data.balance, '30.000000');

    await reverts(wallet.writeContract({ address: vault, abi: vaultAbi, functionName: 'freeze' }), /TooEarly/);
    await chain.increaseTime(3_601);
    await chain.mine(1);
    await clients.client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: vault, abi: vaultAbi, functionName: 'freeze' }) });
    assert.equal(await readVault(clients, vault, 'frozen'), true);

    // Anyone may finish the anchored withdrawal once frozen: the service's record holds the proof.
    const payout = (await s.call('GET', `/v1/withdrawal/${first.id}`)).body.data.payout;
    assert.equal(payout.batch, 1);
    const stranger = await newWallet(chain, clients);
    await clients.client.waitForTransactionReceipt({
      hash: await stranger.writeContract({
        address: vault,
        abi: vaultAbi,
        functionName: 'payout',
        args: [payout.withdrawal_id, payout.to, BigInt(payout.amount), BigInt(payout.batch), payout.proof],
      }),
    });
    assert.equal(await tokenBalance(clients, token, wallet.account.address), units(20));

    // The claim: what the last anchored root says (batch 1: 70), with the proof from the balance-proof route.
    const batches = (await s.call('GET', '/v1/batches')).body.data.batches;
    const anchored = batches.find((batch: { number: number }) => batch.number === 1);
    const proof = (await s.call('GET', `/v1/batch/${anchored.id}/balance/${encodeURIComponent(alice.did)}`)).body.data;
    assert.equal(proof.amount, '70.000000');
    assert.equal(proof.payout_address, wallet.account.address);
    assert.equal(await readVault(clients, vault, 'lastBalanceRoot'), proof.balance_root);
    const claim = {
      address: vault,
      abi: vaultAbi,
      functionName: 'claim',
      args: [proof.leaf.account, proof.leaf.payout, BigInt(proof.leaf.balance), proof.proof],
    } as const;
    await clients.client.waitForTransactionReceipt({ hash: await stranger.writeContract(claim) });
    assert.equal(await tokenBalance(clients, token, wallet.account.address), units(90), 'paid 20 + 70: what alice was owed at the last anchor');
    await reverts(stranger.writeContract(claim), /AlreadyClaimed/);

    // The 40 burned in the unanchored batch can never be paid: the balance claimed above already holds it.
    const unanchored = (await s.call('GET', `/v1/transfers?did=${encodeURIComponent(alice.did)}&limit=1`)).body.data.transfers[0];
    assert.equal(unanchored.kind, 'withdraw');
    const secondWithdrawal = (await s.call('GET', `/v1/receipt/${unanchored.seq}`)).body.data.withdrawal;
    const never = (await s.call('GET', `/v1/withdrawal/${secondWithdrawal.id}`)).body.data;
    assert.equal(never.anchored, false);
    assert.ok(never.payout, 'its leaf exists in the unanchored batch');
    await reverts(
      stranger.writeContract({
        address: vault,
        abi: vaultAbi,
        functionName: 'payout',
        args: [never.payout.withdrawal_id, never.payout.to, BigInt(never.payout.amount), 2n, never.payout.proof],
      }),
      /UnknownBatch/,
    );
    // Bob never bound a payout address: his leaf names none, and the vault pays no one for it.
    const bobProof = (await s.call('GET', `/v1/batch/${anchored.id}/balance/${encodeURIComponent(bob.did)}`)).body.data;
    assert.equal(bobProof.payout_address, null);
    await reverts(
      stranger.writeContract({
        address: vault,
        abi: vaultAbi,
        functionName: 'claim',
        args: [bobProof.leaf.account, zeroAddress, BigInt(bobProof.leaf.balance), bobProof.proof],
      }),
      /ZeroAddress/,
    );

    // The service sees the freeze: it stops moving funds and says so.
    await live.runPass();
    const refused = await s.call('POST', '/v1/pay', { token: bob.token, body: { to: alice.did, amount: '1' } });
    assert.deepEqual([refused.status, refused.body.error?.reason], [409, 'vault_frozen']);
    const health = (await s.call('GET', '/healthz')).body.data;
    assert.deepEqual([health.status, health.chain.frozen], ['alarm', true]);
  });

  test('a payout that fails is marked failed and retried after its delay', async () => {
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir(), pollMs: 500 } });
    const live = s.live as NonNullable<Settlement['live']>;
    const alice = await s.fundedAgent('50');
    const wallet = await newWallet(chain, clients);
    await s.call('POST', '/v1/account/evm', { token: alice.token, body: await bindingBody(wallet, alice.did, 31337) });
    const withdrawal = (await s.call('POST', '/v1/withdraw', { token: alice.token, body: { amount: '30' } })).body.data.withdrawal;
    const info = (await s.call('GET', '/v1/info')).body.data;
    const refill = await emptyVault(info.token_address, info.vault_address);
    await s.call('POST', '/v1/settle', { token: alice.token });
    await untilQuiet(s);
    const failed = (await s.call('GET', `/v1/withdrawal/${withdrawal.id}`)).body.data.withdrawal;
    assert.deepEqual([failed.status, failed.attempts], ['failed', 1]);
    assert.match(failed.last_error, /would fail/);
    await refill();
    await live.runPass();
    assert.equal((await s.call('GET', `/v1/withdrawal/${withdrawal.id}`)).body.data.withdrawal.status, 'failed', 'not before its retry delay');
    s.clock.advance(1_000);
    await untilQuiet(s);
    const paid = (await s.call('GET', `/v1/withdrawal/${withdrawal.id}`)).body.data.withdrawal;
    assert.deepEqual([paid.status, paid.attempts], ['confirmed', 1]);
    assert.equal(await tokenBalance(clients, info.token_address, wallet.account.address), units(30));
  });

  test('an idle sequencer sends a heartbeat before a quarter of the delay has passed, which puts the freeze off', async () => {
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir(), forceWithdrawDelaySeconds: 400 } });
    const live = s.live as NonNullable<Settlement['live']>;
    const vault = (await s.call('GET', '/v1/info')).body.data.vault_address as Address;
    const deployedAt = await readVault(clients, vault, 'lastAnchorAt');
    await live.runPass();
    assert.equal(await readVault(clients, vault, 'lastAnchorAt'), deployedAt, 'too early for a heartbeat');
    await chain.increaseTime(101);
    await chain.mine(1);
    await untilQuiet(s);
    const beat = await readVault(clients, vault, 'lastAnchorAt');
    assert.ok(beat >= deployedAt + 101n, `heartbeat at ${beat}, deployed at ${deployedAt}`);
    await chain.increaseTime(310);
    await chain.mine(1);
    const stranger = await newWallet(chain, clients);
    await reverts(stranger.writeContract({ address: vault, abi: vaultAbi, functionName: 'freeze' }), /TooEarly/);
  });

  test('a transaction that waits too long is replaced with higher fees under the same nonce; the mined one is recorded', async () => {
    s = await startSettlement(pglite, { chain: { rpcUrl: chain.url, dataDir: dataDir(), feeBumpSeconds: 30 } });
    const live = s.live as NonNullable<Settlement['live']>;
    const alice = await s.fundedAgent('5');
    await chain.setAutomine(false);
    try {
      const batch = (await s.call('POST', '/v1/settle', { token: alice.token })).body.data.batch;
      await live.runPass();
      const sent = await s.database.db.selectFrom('chain_transactions').selectAll().where('purpose', '=', 'anchor').executeTakeFirstOrThrow();
      assert.deepEqual([sent.status, sent.hashes.length], ['sent', 1]);
      await live.runPass();
      assert.equal(
        (await s.database.db.selectFrom('chain_transactions').select('hashes').where('id', '=', sent.id).executeTakeFirstOrThrow()).hashes.length,
        1,
      );
      s.clock.advance(30_000);
      await live.runPass();
      const bumped = await s.database.db.selectFrom('chain_transactions').selectAll().where('id', '=', sent.id).executeTakeFirstOrThrow();
      assert.equal(bumped.hashes.length, 2, 'replaced once');
      assert.equal(bumped.nonce, sent.nonce);
      assert.ok(BigInt(bumped.max_fee_per_gas) * 100n >= BigInt(sent.max_fee_per_gas) * 110n, 'at least 10% more');
      await chain.mine(1);
      await live.runPass();
      const mined = await s.database.db.selectFrom('chain_transactions').selectAll().where('id', '=', sent.id).executeTakeFirstOrThrow();
      assert.deepEqual([mined.status, mined.mined_hash], ['confirmed', bumped.hashes[1]]);
      await live.runPass();
      const anchoredBatch = (await s.call('GET', `/v1/batch/${batch.id}`)).body.data;
      assert.deepEqual([anchoredBatch.anchor.status, anchoredBatch.anchor.tx_hash], ['confirmed', bumped.hashes[1]]);
      const replaced = await clients.client.getTransactionReceipt({ hash: sent.hashes[0] as Hex }).catch(() => undefined);
      assert.equal(replaced, undefined, 'the first never landed');
    } finally {
      await chain.setAutomine(true);
    }
  });
});
