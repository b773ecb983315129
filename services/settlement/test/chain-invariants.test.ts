import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { parseAmount } from '@platform/kit/money';
import { testEngines } from '@platform/testkit/databases';
import { seededRandom } from '@platform/testkit/seeded-random';
import type { TestChain } from '@platform/testkit/test-chain';
import type { Address } from 'viem';
import { vaultAbi } from '../src/chain/vault-contracts.ts';
import { bindingBody, type Clients, depositOnChain, mint, newWallet, readVault, tokenBalance, untilQuiet, useTestChain } from './chain-helpers.ts';
import { type Settlement, startSettlement } from './harness.ts';

const rounds = 5;
const workers = 3;
const agentsPerWorker = 2;
const opsPerRound = 16;
const micros = (amount: string) => {
  const parsed = parseAmount(amount, { allowZero: true });
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.micros;
};

let chain: TestChain;
let clients: Clients;
const { dataDir } = useTestChain('settlement-chain-invariants-', (node, viem) => {
  chain = node;
  clients = viem;
});

for (const engine of testEngines()) {
  describe(`ledger invariants with the chain live, ${engine.name}`, () => {
    let s: Settlement;
    afterEach(async () => s?.close());

    test('random pays, holds, withdrawals and vault deposits: after each round the vault holds exactly the supply, every batch is anchored with its own roots, every payout paid once', async () => {
      s = await startSettlement(engine, { window: { maxReceipts: 15 }, chain: { rpcUrl: chain.url, dataDir: dataDir() } });
      const seed = Number(process.env.INVARIANT_SEED ?? Date.now() % 100_000);
      const next = seededRandom(seed);
      const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
      const amount = () => `${Math.floor(next() * 15)}.${String(Math.floor(next() * 1_000_000)).padStart(6, '0')}`;
      const info = (await s.call('GET', '/v1/info')).body.data;
      const vault = info.vault_address as Address;
      const token = info.token_address as Address;

      // Each worker owns its agents' wallets (one sender per wallet, so their nonces never race).
      const team: Array<
        Awaited<ReturnType<Settlement['agent']>> & { wallet: Awaited<ReturnType<typeof newWallet>>; instructions: Parameters<typeof depositOnChain>[2] }
      > = [];
      for (let i = 0; i < workers * agentsPerWorker; i++) {
        const agent = await s.agent();
        const wallet = await newWallet(chain, clients);
        await mint(clients, token, wallet.account.address, 10_000_000_000n);
        const instructions = (await s.call('GET', '/v1/deposit', { token: agent.token })).body.data;
        await depositOnChain(clients, wallet, instructions, micros(`${50 + i * 10}`));
        team.push({ ...agent, wallet, instructions });
      }
      await s.live?.runPass();
      // An account exists from its first credit; then it can bind where its withdrawals go.
      for (const agent of team)
        assert.equal((await s.call('POST', '/v1/account/evm', { token: agent.token, body: await bindingBody(agent.wallet, agent.did, 31337) })).status, 200);
      const holds: Array<{ id: string; payer: (typeof team)[number]; payee: (typeof team)[number] }> = [];
      let withdrawn = 0n;
      let checkedBatches = 0;

      async function operate(worker: number, round: number) {
        const mine = team.slice(worker * agentsPerWorker, (worker + 1) * agentsPerWorker);
        for (let op = 0; op < opsPerRound; op++) {
          const me = pick(team);
          const other = pick(team.filter((agent) => agent !== me));
          const roll = next();
          let response: Awaited<ReturnType<Settlement['call']>>;
          if (roll < 0.35)
            response = await s.call('POST', '/v1/pay', {
              token: me.token,
              body: { to: other.did, amount: amount(), idempotency_key: `r${round}w${worker}o${op}` },
            });
          else if (roll < 0.5) {
            response = await s.call('POST', '/v1/hold', { token: me.token, body: { to: other.did, amount: amount() } });
            if (response.status === 200) holds.push({ id: response.body.data.hold.id, payer: me, payee: other });
          } else if (roll < 0.6 && holds.length > 0) {
            const hold = pick(holds);
            response = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: hold.payee.token, body: {} });
          } else if (roll < 0.7 && holds.length > 0) {
            const hold = pick(holds);
            response = await s.call('POST', `/v1/hold/${hold.id}/release`, { token: hold.payee.token });
          } else if (roll < 0.85) {
            response = await s.call('POST', '/v1/withdraw', { token: me.token, body: { amount: amount() } });
            if (response.status === 200) withdrawn += micros(response.body.data.withdrawal.amount);
          } else {
            const depositor = pick(mine);
            await depositOnChain(clients, depositor.wallet, depositor.instructions, micros(amount()) + 1n);
            continue;
          }
          assert.ok([200, 403, 409].includes(response.status), `seed ${seed}: unexpected ${response.status} ${JSON.stringify(response.body)}`);
        }
      }

      for (let round = 0; round < rounds; round++) {
        await Promise.all(Array.from({ length: workers }, (_, worker) => operate(worker, round)));
        await s.call('POST', '/v1/settle', { token: team[0]?.token ?? '' });
        await untilQuiet(s);

        // The vault holds exactly the supply: every deposit credited, every withdrawal paid.
        const supply = (await s.call('GET', '/v1/supply')).body.data;
        assert.equal(supply.reserve, supply.supply, `seed ${seed}, round ${round}: ${JSON.stringify(supply)}`);
        assert.deepEqual([supply.fully_reserved, supply.in_flight_withdrawals, supply.alarm], [true, '0.000000', null], `seed ${seed}, round ${round}`);
        assert.equal(await readVault(clients, vault, 'reserve'), micros(supply.supply));
        assert.equal((await s.call('GET', '/healthz')).body.data.status, 'ok');

        // Every batch closed so far is anchored, in order, with exactly its own roots.
        const batches = (await s.call('GET', '/v1/batches?limit=200')).body.data.batches.reverse();
        const anchored = await clients.client.getContractEvents({ address: vault, abi: vaultAbi, eventName: 'Anchored', fromBlock: 0n });
        assert.equal(anchored.length, batches.length, `seed ${seed}: one anchor per batch`);
        for (const [index, batch] of batches.entries()) {
          const event = anchored[index]?.args;
          assert.deepEqual(
            [event?.batch, event?.balanceRoot, event?.logRoot, event?.logSize, event?.depositsCovered],
            [BigInt(batch.number), batch.balance_root, batch.log_root, BigInt(batch.log_size), BigInt(batch.deposits_covered)],
            `seed ${seed}: batch ${batch.number}`,
          );
          assert.equal(event?.withdrawalsRoot, batch.withdrawals_root ?? `0x${'0'.repeat(64)}`);
          assert.equal(batch.anchor.status, 'confirmed');
          assert.equal(batch.anchor.tx_hash, anchored[index]?.transactionHash);
        }
        checkedBatches = batches.length;
      }
      assert.ok(checkedBatches >= rounds, `seed ${seed}: windows closed: ${checkedBatches}`);

      // Every payout reached its bound address exactly once.
      const paid = await clients.client.getContractEvents({ address: vault, abi: vaultAbi, eventName: 'WithdrawalPaid', fromBlock: 0n });
      assert.equal(new Set(paid.map((log) => log.args.withdrawalId)).size, paid.length, 'no withdrawal paid twice');
      assert.equal(
        paid.reduce((total, log) => total + (log.args.amount ?? 0n), 0n),
        withdrawn,
        `seed ${seed}: the vault paid out exactly what was burned`,
      );
      let atWallets = 0n;
      for (const agent of team) atWallets += await tokenBalance(clients, token, agent.wallet.account.address);
      assert.ok(atWallets > 0n);
    });
  });
}
