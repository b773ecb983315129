import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { openCheckpoint } from '@platform/kit/receipt-log/checkpoint';
import { verifyConsistency, verifyInclusion } from '@platform/kit/receipt-log/merkle-log';
import { receiptLeafHash, verifyReceipt } from '@platform/kit/receipt-log/receipt';
import { testEngines } from '@platform/testkit/databases';
import { eventually } from '@platform/testkit/eventually';
import { type Settlement, startSettlement } from './harness.ts';

const fromHex = (hex: string) => Buffer.from(hex.replace(/^0x/, ''), 'hex');

for (const engine of testEngines()) {
  describe(`windows, batches and proofs on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine, { window: { seconds: 60, maxReceipts: 5, immediateMicros: 1_000_000_000n } });
    });
    after(async () => s.close());

    const info = async () => (await s.call('GET', '/v1/info')).body.data;
    const latest = async () => (await s.call('GET', '/v1/batches?limit=1')).body.data.batches[0];

    test('info publishes the chain, addresses, window and the keys that verify receipts and checkpoints', async () => {
      const data = await info();
      assert.equal(data.chain_id, 125);
      assert.equal(data.role, 'sequencer');
      assert.match(data.sequencer_public_key, /^[0-9a-f]{64}$/);
      assert.deepEqual(data.window, { seconds: 60, max_receipts: 5, immediate_amount: '1000.000000' });
      assert.ok(data.checkpoint_verifier_key.startsWith(`${data.checkpoint_origin}+`));
      const root = await s.call('GET', '/');
      assert.equal(root.body.data.version, data.version);
    });

    test('settle closes the open window into a batch; an empty window makes none', async () => {
      const payer = await s.fundedAgent('10');
      const closed = await s.call('POST', '/v1/settle', { token: payer.token });
      assert.equal(closed.status, 200);
      assert.equal(closed.body.data.closed, true);
      assert.equal(closed.body.data.batch.reason, 'settle');
      const empty = await s.call('POST', '/v1/settle', { token: payer.token });
      assert.deepEqual(empty.body.data, { closed: false, batch: null });
    });

    test('a window closes by itself at its receipt count, after a large movement, and when it is old enough', async () => {
      // Two credits under the 1000 threshold, so the setup itself closes nothing early.
      const payer = await s.fundedAgent('600');
      await s.call('POST', '/v1/dev/faucet', { token: payer.token, body: { amount: '600' } });
      await s.call('POST', '/v1/settle', { token: payer.token });
      const before = (await latest()).number;
      const payee = await s.agent();
      for (let i = 0; i < 5; i++) {
        const paid = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
        assert.equal(paid.status, 200, JSON.stringify(paid.body));
      }
      // The close follows the acknowledged group, so the answer may arrive just before the batch does.
      await eventually(async () => (await latest()).number === before + 1, 'the count closes the window');
      const byCount = await latest();
      assert.deepEqual([byCount.number, byCount.reason, byCount.last_seq - byCount.first_seq + 1], [before + 1, 'count', 5]);
      await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1000' } });
      await eventually(async () => (await latest()).number === before + 2, 'the large pay closes the window');
      assert.deepEqual([(await latest()).number, (await latest()).reason], [before + 2, 'amount']);
      await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
      s.clock.advance(60_000);
      assert.equal((await latest()).number, before + 2, 'the window is only checked on the tick');
      s.clock.advance(3_600_000);
      await eventually(async () => (await latest()).number === before + 3, 'the tick closes the old window');
      assert.equal((await latest()).reason, 'time');
    });

    test('every receipt verifies with the published key and its inclusion proof against the signed checkpoint', async () => {
      const { sequencer_public_key: sequencerKey, checkpoint_verifier_key: vkey, checkpoint_origin: origin } = await info();
      const payer = await s.fundedAgent('20');
      const payee = await s.agent();
      const paid = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '3' } });
      const pending = await s.call('GET', `/v1/receipt/${paid.body.data.seq}`);
      assert.deepEqual([pending.body.data.batch, pending.body.data.inclusion_proof], [null, null]);
      await s.call('POST', '/v1/settle', { token: payer.token });
      const data = (await s.call('GET', `/v1/receipt/${paid.body.data.seq}`)).body.data;
      const verified = await verifyReceipt(data.receipt, sequencerKey);
      assert.ok(verified.ok, verified.ok ? '' : verified.reason);
      const checkpoint = await openCheckpoint(data.batch.checkpoint, vkey);
      assert.ok(checkpoint.ok);
      assert.equal(checkpoint.origin, origin);
      assert.equal(`0x${Buffer.from(checkpoint.rootHash).toString('hex')}`, data.batch.log_root);
      const proof = data.inclusion_proof.map(fromHex);
      assert.ok(await verifyInclusion(receiptLeafHash(verified.receipt), data.leaf_index, checkpoint.treeSize, proof, checkpoint.rootHash));
      assert.ok(
        !(await verifyInclusion(
          receiptLeafHash({ ...verified.receipt, amount: '3.000001' }),
          data.leaf_index,
          checkpoint.treeSize,
          proof,
          checkpoint.rootHash,
        )),
      );
      const anchor = await s.call('GET', `/v1/anchor/${data.batch.log_root}`);
      assert.equal(anchor.body.data.batch_id, data.batch.id);
      assert.deepEqual([anchor.body.data.chain_id, anchor.body.data.status, anchor.body.data.tx_hash], [125, 'recorded', null]);
      assert.equal((await s.call('GET', `/v1/anchor/${data.batch.balance_root}`)).body.data.batch_id, data.batch.id);
      assert.equal((await s.call('GET', `/v1/anchor/0x${'0'.repeat(64)}`)).status, 404);
      assert.equal((await s.call('GET', '/v1/anchor/0x12')).status, 400);
    });

    test('consecutive checkpoints are consistent, and the proof fails for a forged root', async () => {
      const { checkpoint_verifier_key: vkey } = await info();
      const batches = (await s.call('GET', '/v1/batches?limit=200')).body.data.batches.reverse();
      assert.ok(batches.length >= 3);
      for (let i = 1; i < batches.length; i++) {
        const older = await openCheckpoint(batches[i - 1].checkpoint, vkey);
        const newer = await openCheckpoint(batches[i].checkpoint, vkey);
        assert.ok(older.ok && newer.ok);
        const response = await s.call('GET', `/v1/log/consistency?from=${older.treeSize}&to=${newer.treeSize}`);
        assert.equal(response.status, 200);
        const proof = response.body.data.proof.map(fromHex);
        assert.ok(await verifyConsistency(older.treeSize, newer.treeSize, older.rootHash, newer.rootHash, proof), `batch ${i}`);
        assert.ok(!(await verifyConsistency(older.treeSize, newer.treeSize, Buffer.alloc(32, 1), newer.rootHash, proof)));
      }
      const head = await openCheckpoint((await s.call('GET', '/v1/checkpoint')).body.data.checkpoint, vkey);
      assert.ok(head.ok);
      assert.equal((await s.call('GET', `/v1/log/consistency?from=1&to=${head.treeSize + 1}`)).status, 400);
      assert.equal((await s.call('GET', '/v1/log/consistency?from=0')).status, 400);
    });

    test('balance proofs verify with @openzeppelin/merkle-tree against the batch balance root; leaves add up to supply', async () => {
      const payer = await s.fundedAgent('9');
      const payee = await s.agent();
      await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount: '2' } });
      const batch = (await s.call('POST', '/v1/settle', { token: payer.token })).body.data.batch;
      const proof = (await s.call('GET', `/v1/batch/${batch.id}/balance/${payer.did}`)).body.data;
      assert.equal(proof.amount, '9.000000', 'balance plus its own open holds');
      assert.ok(
        StandardMerkleTree.verify(
          batch.balance_root,
          ['bytes32', 'bytes32', 'address', 'uint256'],
          [proof.leaf.tag, proof.leaf.account, proof.leaf.payout, proof.leaf.balance],
          proof.proof,
        ),
      );
      assert.ok(
        !StandardMerkleTree.verify(
          batch.balance_root,
          ['bytes32', 'bytes32', 'address', 'uint256'],
          [proof.leaf.tag, proof.leaf.account, proof.leaf.payout, '9000001'],
          proof.proof,
        ),
      );
      assert.equal((await s.call('GET', `/v1/batch/${batch.id}/balance/${payee.did}`)).status, 404, 'no account yet, no leaf');
      assert.equal((await s.call('GET', `/v1/batch/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/balance/${payer.did}`)).status, 404);
      const fetched = await s.call('GET', `/v1/batch/${batch.id}`);
      assert.deepEqual(fetched.body.data, batch);
      assert.equal((await s.call('GET', '/v1/batch/nope')).status, 400);
    });

    test('the batch feed pages newest first with next_before', async () => {
      const seen: number[] = [];
      let before: number | null = null;
      do {
        const page: Awaited<ReturnType<Settlement['call']>> = await s.call('GET', `/v1/batches?limit=2${before === null ? '' : `&before=${before}`}`);
        seen.push(...page.body.data.batches.map((b: { number: number }) => b.number));
        before = page.body.data.next_before;
      } while (before !== null);
      assert.deepEqual(
        seen,
        Array.from({ length: seen.length }, (_, i) => seen.length - i),
      );
    });
  });
}
