import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { parseAmount } from '@platform/kit/money';
import { payoutBindingMessage } from '@platform/kit/payout-binding';
import { openCheckpoint } from '@platform/kit/receipt-log/checkpoint';
import { verifyConsistency, verifyInclusion } from '@platform/kit/receipt-log/merkle-log';
import { receiptLeafHash, verifyReceipt } from '@platform/kit/receipt-log/receipt';
import { testEngines } from '@platform/testkit/databases';
import { seededRandom } from '@platform/testkit/seeded-random';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type Settlement, startSettlement } from './harness.ts';

const agents = 10;
const workers = 8;
const opsPerWorker = 40;
const micros = (amount: string) => {
  const parsed = parseAmount(amount, { allowZero: true });
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.micros;
};
const fromHex = (hex: string) => Buffer.from(hex.replace(/^0x/, ''), 'hex');

for (const engine of testEngines()) {
  describe(`ledger invariants under concurrent random load on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine, { window: { maxReceipts: 25 }, tickMs: 10_000, maxGroup: 16 });
    });
    after(async () => s.close());

    test('no negative balance, money conserved, fully reserved, every receipt, checkpoint and balance proof verifies', async () => {
      const seed = Number(process.env.INVARIANT_SEED ?? Date.now() % 100_000);
      const next = seededRandom(seed);
      const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
      const team: Array<Awaited<ReturnType<Settlement['fundedAgent']>>> = [];
      for (let i = 0; i < agents; i++) {
        const agent = await s.fundedAgent(`${50 + i * 10}`);
        const wallet = privateKeyToAccount(generatePrivateKey());
        const signature = await wallet.signMessage({ message: payoutBindingMessage(agent.did, wallet.address, 125) });
        assert.equal((await s.call('POST', '/v1/account/evm', { token: agent.token, body: { address: wallet.address, signature } })).status, 200);
        team.push(agent);
      }
      const holds: Array<{ id: string; payer: (typeof team)[number]; payee: (typeof team)[number] }> = [];
      const statuses = new Map<number, number>();
      const amount = () => `${Math.floor(next() * 20)}.${String(Math.floor(next() * 1_000_000)).padStart(6, '0')}`;

      async function operate(worker: number) {
        for (let op = 0; op < opsPerWorker; op++) {
          const me = pick(team);
          const other = pick(team.filter((agent) => agent !== me));
          const roll = next();
          let response: Awaited<ReturnType<Settlement['call']>>;
          if (roll < 0.4) {
            response = await s.call('POST', '/v1/pay', { token: me.token, body: { to: other.did, amount: amount(), idempotency_key: `w${worker}-${op}` } });
          } else if (roll < 0.6) {
            response = await s.call('POST', '/v1/hold', {
              token: me.token,
              body: { to: other.did, amount: amount(), expires_in_seconds: 30 + Math.floor(next() * 60) },
            });
            if (response.status === 200) holds.push({ id: response.body.data.hold.id, payer: me, payee: other });
          } else if (roll < 0.75 && holds.length > 0) {
            const hold = pick(holds);
            response = await s.call('POST', `/v1/hold/${hold.id}/capture`, { token: hold.payee.token, body: next() < 0.5 ? {} : { amount: amount() } });
          } else if (roll < 0.85 && holds.length > 0) {
            const hold = pick(holds);
            response = await s.call('POST', `/v1/hold/${hold.id}/release`, { token: next() < 0.5 ? hold.payee.token : hold.payer.token });
          } else if (roll < 0.95) {
            response = await s.call('POST', '/v1/withdraw', { token: me.token, body: { amount: amount() } });
          } else {
            s.clock.advance(15_000);
            continue;
          }
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          assert.ok([200, 403, 409].includes(response.status), `seed ${seed}: unexpected ${response.status} ${JSON.stringify(response.body)}`);
        }
      }
      await Promise.all(Array.from({ length: workers }, (_, worker) => operate(worker)));
      assert.ok((statuses.get(200) ?? 0) > workers * opsPerWorker * 0.3, `seed ${seed}: most operations should succeed: ${JSON.stringify([...statuses])}`);
      await s.call('POST', '/v1/settle', { token: team[0]?.token ?? '' });

      // Balances: never negative, and deposits = balances + held + withdrawn.
      const accounts = await Promise.all(team.map(async (agent) => (await s.call('GET', `/v1/account/${agent.did}`)).body.data));
      for (const account of accounts) assert.ok(micros(account.balance) >= 0n && micros(account.held) >= 0n);
      const all: Array<{ seq: number; kind: string; from: string; to: string; amount: string }> = [];
      let before: number | null = null;
      do {
        const page: Awaited<ReturnType<Settlement['call']>> = await s.call('GET', `/v1/transfers?limit=200${before === null ? '' : `&before=${before}`}`);
        all.push(...page.body.data.transfers);
        before = page.body.data.next_before;
      } while (before !== null);
      all.reverse();
      assert.deepEqual(
        all.map((t) => t.seq),
        Array.from({ length: all.length }, (_, i) => i + 1),
        'seqs are gap-free',
      );
      const sum = (kind: string) => all.filter((t) => t.kind === kind).reduce((total, t) => total + micros(t.amount), 0n);
      const balances = accounts.reduce((total, a) => total + micros(a.balance), 0n);
      const held = accounts.reduce((total, a) => total + micros(a.held), 0n);
      assert.equal(balances + held + sum('withdraw'), sum('deposit'), `seed ${seed}: money is conserved`);
      const supply = (await s.call('GET', '/v1/supply')).body.data;
      assert.equal(supply.fully_reserved, true);
      assert.equal(micros(supply.supply), balances + held);

      // Replaying the feed rebuilds every balance exactly.
      const replayed = new Map<string, { balance: bigint; held: bigint }>();
      const change = (did: string, field: 'balance' | 'held', delta: bigint) => {
        const slot = replayed.get(did) ?? { balance: 0n, held: 0n };
        slot[field] += delta;
        replayed.set(did, slot);
        assert.ok(slot[field] >= 0n, `seed ${seed}: ${field} of ${did} below zero`);
      };
      for (const t of all) {
        const value = micros(t.amount);
        // Credits first, so a replayed movement never dips below zero on its own ordering.
        if (t.kind === 'deposit') change(t.to, 'balance', value);
        if (t.kind === 'transfer') {
          change(t.to, 'balance', value);
          change(t.from, 'balance', -value);
        }
        if (t.kind === 'withdraw') change(t.from, 'balance', -value);
        if (t.kind === 'hold') {
          change(t.from, 'held', value);
          change(t.from, 'balance', -value);
        }
        if (t.kind === 'capture') {
          change(t.to, 'balance', value);
          change(t.from, 'held', -value);
        }
        if (t.kind === 'release' || t.kind === 'expire') {
          change(t.from, 'balance', value);
          change(t.from, 'held', -value);
        }
      }
      for (const account of accounts) {
        assert.deepEqual(replayed.get(account.did), { balance: micros(account.balance), held: micros(account.held) });
      }

      // Every receipt verifies, and its inclusion proof against its batch's signed checkpoint.
      const info = (await s.call('GET', '/v1/info')).body.data;
      for (const t of all) {
        const data = (await s.call('GET', `/v1/receipt/${t.seq}`)).body.data;
        const verified = await verifyReceipt(data.receipt, info.sequencer_public_key);
        assert.ok(verified.ok, `receipt ${t.seq}`);
        const checkpoint = await openCheckpoint(data.batch.checkpoint, info.checkpoint_verifier_key);
        assert.ok(checkpoint.ok);
        assert.ok(
          await verifyInclusion(receiptLeafHash(verified.receipt), t.seq - 1, checkpoint.treeSize, data.inclusion_proof.map(fromHex), checkpoint.rootHash),
          `inclusion ${t.seq}`,
        );
      }

      // Consecutive checkpoints are consistent; every balance proof verifies against its batch root.
      const batches = (await s.call('GET', '/v1/batches?limit=200')).body.data.batches.reverse();
      assert.ok(batches.length >= 3, 'the count trigger closed several windows');
      for (let i = 0; i < batches.length; i++) {
        const newer = await openCheckpoint(batches[i].checkpoint, info.checkpoint_verifier_key);
        assert.ok(newer.ok);
        if (i > 0) {
          const older = await openCheckpoint(batches[i - 1].checkpoint, info.checkpoint_verifier_key);
          assert.ok(older.ok);
          const proof = (await s.call('GET', `/v1/log/consistency?from=${older.treeSize}&to=${newer.treeSize}`)).body.data.proof.map(fromHex);
          assert.ok(await verifyConsistency(older.treeSize, newer.treeSize, older.rootHash, newer.rootHash, proof));
        }
        let leaves = 0n;
        for (const agent of team) {
          const response = await s.call('GET', `/v1/batch/${batches[i].id}/balance/${agent.did}`);
          if (response.status === 404) continue;
          const { leaf, proof } = response.body.data;
          assert.ok(
            StandardMerkleTree.verify(
              batches[i].balance_root,
              ['bytes32', 'bytes32', 'address', 'uint256'],
              [leaf.tag, leaf.account, leaf.payout, leaf.balance],
              proof,
            ),
          );
          leaves += BigInt(leaf.balance);
        }
        const lastBatch = i === batches.length - 1;
        if (lastBatch) assert.equal(leaves, balances + held, 'the last tree’s leaves add up to supply');
      }
    });
  });
}
