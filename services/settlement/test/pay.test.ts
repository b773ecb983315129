import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { encodeIntent, newIntentNonce, signIntent } from '@platform/kit/settlement-intent';
import { testEngines } from '@platform/testkit/databases';
import { type Settlement, startSettlement } from './harness.ts';

for (const engine of testEngines()) {
  describe(`pay and accounts on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine);
    });
    after(async () => s.close());

    test('every malformed amount is a 400 naming amount, and moves nothing', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const bad: unknown[] = [
        '0',
        '0.000000',
        '-1',
        '1e3',
        '1.0000001',
        ' 1',
        '1 ',
        '',
        '1,5',
        '0x10',
        'NaN',
        'Infinity',
        '1000000000.000001',
        1,
        1.5,
        null,
        true,
      ];
      for (const amount of bad) {
        const response = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount } });
        assert.equal(response.status, 400, `amount ${JSON.stringify(amount)}: ${JSON.stringify(response.body)}`);
        assert.equal(response.body.error?.code, 'invalid_request');
      }
      assert.equal((await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance, '10.000000');
      assert.equal((await s.call('GET', `/v1/account/${payee.did}`)).status, 404);
    });

    test('amounts at the edges: the smallest unit and six places are exact; at most 10^9 units', async () => {
      const payer = await s.fundedAgent('1000000000');
      const payee = await s.agent();
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '0.000001' } })).status, 200);
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1.5' } })).status, 200);
      const account = await s.call('GET', `/v1/account/${payee.did}`);
      assert.equal(account.body.data.balance, '1.500001');
      const tooMuch = await s.call('POST', '/v1/dev/faucet', { token: payee.token, body: { amount: '1000000000' } });
      assert.equal(tooMuch.status, 409, 'a credit past the per-account maximum is refused');
      assert.equal(tooMuch.body.error?.reason, 'balance_limit');
    });

    test('a pay moves funds, creates the payee on first credit and answers the seq of a signed receipt', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      assert.equal((await s.call('GET', `/v1/account/${payee.did}`)).status, 404);
      const ref = `0x${'ab'.repeat(32)}`;
      const paid = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '2.25', ref } });
      assert.equal(paid.status, 200);
      assert.equal(paid.body.ok, true);
      const receipt = paid.body.data.receipt;
      assert.deepEqual(
        [receipt.seq, receipt.kind, receipt.from, receipt.to, receipt.amount, receipt.ref],
        [paid.body.data.seq, 'transfer', payer.did, payee.did, '2.250000', ref],
      );
      const account = await s.call('GET', `/v1/account/${payee.did}`);
      assert.equal(account.status, 200);
      assert.deepEqual(Object.keys(account.body.data).sort(), ['balance', 'created_at', 'did', 'escrow_bound', 'held', 'payout_address']);
      assert.equal(account.body.data.balance, '2.250000');
      const fetched = await s.call('GET', `/v1/receipt/${paid.body.data.seq}`);
      assert.deepEqual(fetched.body.data.receipt, receipt);
    });

    test('pay refusals: self 400, malformed DID 400, bad ref 400, unknown field 400, insufficient funds 409 with the available amount', async () => {
      const payer = await s.fundedAgent('3');
      const payee = await s.agent();
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payer.did, amount: '1' } })).status, 400);
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: 'did:platform:x', amount: '1' } })).status, 400);
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1', ref: '0x12' } })).status, 400);
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1', memo: 'x' } })).status, 400);
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { amount: '1' } })).status, 400);
      const broke = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '3.000001' } });
      assert.equal(broke.status, 409);
      assert.deepEqual([broke.body.error?.reason, broke.body.error?.available], ['insufficient_funds', '3.000000']);
      assert.equal(
        (await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '3' } })).status,
        200,
        'exactly the balance can be spent',
      );
      assert.equal((await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance, '0.000000');
    });

    test('idempotency: a replay returns the original result; the same key with other terms is a 409; keys are per payer', async () => {
      const payer = await s.fundedAgent('10');
      const other = await s.fundedAgent('10');
      const payee = await s.agent();
      const first = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1', idempotency_key: 'order-1' } });
      const replay = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1.000000', idempotency_key: 'order-1' } });
      assert.equal(replay.status, 200);
      assert.deepEqual(replay.body.data, first.body.data);
      const changed = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '2', idempotency_key: 'order-1' } });
      assert.equal(changed.status, 409);
      assert.equal(changed.body.error?.reason, 'idempotency_key_reused');
      const sameKeyOtherPayer = await s.call('POST', '/v1/pay', { token: other.token, body: { to: payee.did, amount: '1', idempotency_key: 'order-1' } });
      assert.equal(sameKeyOtherPayer.status, 200);
      assert.notEqual(sameKeyOtherPayer.body.data.seq, first.body.data.seq);
      assert.equal((await s.call('GET', `/v1/account/${payee.did}`)).body.data.balance, '2.000000');
      const tooLong = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1', idempotency_key: 'k'.repeat(129) } });
      assert.equal(tooLong.status, 400);
    });

    test('concurrent replays of one key apply once', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const body = { to: payee.did, amount: '1', idempotency_key: 'burst' };
      const results = await Promise.all(Array.from({ length: 20 }, () => s.call('POST', '/v1/pay', { token: payer.token, body })));
      assert.ok(results.every((result) => result.status === 200));
      assert.equal(new Set(results.map((result) => result.body.data.seq)).size, 1);
      assert.equal((await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance, '9.000000');
    });

    test('transfers feed: newest first, limit, before and did, next_before until the end', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      for (let i = 0; i < 5; i++) await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
      const seqs: number[] = [];
      let before: number | null = null;
      do {
        const page: Awaited<ReturnType<Settlement['call']>> = await s.call(
          'GET',
          `/v1/transfers?did=${payee.did}&limit=2${before === null ? '' : `&before=${before}`}`,
        );
        assert.equal(page.status, 200);
        assert.ok(page.body.data.transfers.length <= 2);
        seqs.push(...page.body.data.transfers.map((t: { seq: number }) => t.seq));
        before = page.body.data.next_before;
      } while (before !== null);
      assert.equal(seqs.length, 5);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => b - a),
      );
      const all = await s.call('GET', '/v1/transfers?limit=200');
      assert.equal(all.status, 200);
      for (const query of ['limit=0', 'limit=201', 'limit=abc', 'before=0', 'before=-1', 'did=nope']) {
        assert.equal((await s.call('GET', `/v1/transfers?${query}`)).status, 400, query);
      }
    });

    test('balance before the first credit reads as zeros; unknown receipt 404; malformed seq 400', async () => {
      const fresh = await s.agent();
      const balance = await s.call('GET', '/v1/balance', { token: fresh.token });
      assert.deepEqual(balance.body.data, {
        did: fresh.did,
        balance: '0.000000',
        held: '0.000000',
        escrow_bound: '0.000000',
        payout_address: null,
        created_at: null,
      });
      assert.equal((await s.call('GET', '/v1/receipt/999999')).status, 404);
      assert.equal((await s.call('GET', '/v1/receipt/abc')).status, 400);
      assert.equal((await s.call('GET', '/v1/receipt/0')).status, 400);
    });

    test('a DID is one account whatever the case of its key fingerprint', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const shouted = payee.did.replace(/:([0-9a-f]{16})$/, (_m, fp: string) => `:${fp.toUpperCase()}`);
      assert.equal((await s.call('POST', '/v1/pay', { token: payer.token, body: { to: shouted, amount: '1' } })).status, 200);
      assert.equal((await s.call('GET', `/v1/account/${payee.did}`)).body.data.balance, '1.000000');
      assert.equal((await s.call('GET', `/v1/account/${shouted}`)).body.data.did, payee.did);
    });

    test('limits at and past their edge: body 16 KiB, idempotency key 128, DID 256, intent 4096 characters', async () => {
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const pay = (body: Record<string, unknown>) => s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '0.1', ...body } });
      assert.equal((await pay({ idempotency_key: 'k'.repeat(128) })).status, 200);
      assert.equal((await pay({ idempotency_key: 'k'.repeat(129) })).status, 400);
      const longLabel = `did:platform:${'a'.repeat(256 - 'did:platform::0123456789abcdef'.length)}:0123456789abcdef`;
      assert.equal(longLabel.length, 256);
      assert.equal((await pay({ to: longLabel })).status, 200, 'a 256-character DID is accepted');
      assert.equal((await pay({ to: `did:platform:a${longLabel.slice('did:platform:'.length)}` })).status, 400);
      assert.equal((await s.call('POST', '/v1/pay', { body: { intent: 'a'.repeat(4097) } })).status, 400);
      assert.equal(
        (await s.call('POST', '/v1/pay', { body: { intent: 'a'.repeat(4096) } })).status,
        401,
        'at the limit it is read, then refused as a bad intent',
      );
      const big = await s.app.inject({
        method: 'POST',
        url: '/v1/pay',
        headers: { 'x-ledger-agent': payer.token, 'content-type': 'application/json' },
        payload: JSON.stringify({ to: payee.did, amount: '1', pad: 'x'.repeat(16 * 1024) }),
      });
      assert.equal(big.statusCode, 413);
      assert.equal((await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance, '9.800000');
    });
  });
}

for (const engine of testEngines()) {
  describe(`idempotency beyond the writer's memory on ${engine.name}`, () => {
    let s: Settlement;
    before(async () => {
      s = await startSettlement(engine, { recentIdempotencyKeys: 1 });
    });
    after(async () => s.close());

    test('a replay of a key the writer no longer remembers still returns the original, also amid new pays in one group', async () => {
      const payer = await s.fundedAgent('100');
      const payee = await s.agent();
      const pay = (key: string, amount = '1') => s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount, idempotency_key: key } });
      const original = await pay('old');
      await pay('newer-1');
      await pay('newer-2');
      const replay = await pay('old');
      assert.equal(replay.status, 200);
      assert.deepEqual(replay.body.data, original.body.data);
      assert.equal((await pay('old', '2')).status, 409, 'and a changed request is still a conflict');
      await pay('newer-3');
      // The forgotten key shares a group with new ones: the guard refuses the group, and the writer applies it again.
      const mixed = await Promise.all([pay('old'), pay('fresh-1'), pay('newer-1'), pay('fresh-2')]);
      assert.ok(mixed.every((response) => response.status === 200));
      assert.equal(mixed[0]?.body.data.seq, original.body.data.seq);
      const seqs = mixed.map((response) => response.body.data.seq);
      assert.equal(new Set(seqs).size, 4);
      const balance = (await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance;
      assert.equal(balance, '94.000000', 'six distinct keys, six pays of 1');
      const feed = await s.call('GET', `/v1/transfers?did=${payer.did}&limit=200`);
      assert.deepEqual(
        feed.body.data.transfers.map((t: { seq: number }) => t.seq),
        Array.from({ length: 7 }, (_, i) => feed.body.data.transfers[0].seq - i),
        'no gap in the seqs after a refused group',
      );
    });

    test('an intent nonce the writer no longer remembers is still single use, and a forgotten hold is still captured once', async () => {
      const payer = await s.fundedAgent('100');
      const payee = await s.agent();
      const signed = (purpose: 'pay' | 'hold', nonce = newIntentNonce()) =>
        encodeIntent(
          signIntent(
            {
              version: 1,
              from: payer.did,
              to: payee.did,
              amount: '1',
              ref: '',
              nonce,
              expiry: new Date(s.clock.now().getTime() + 60_000).toISOString(),
              purpose,
            },
            privateKeyFromSeed(payer.key.seedHex),
          ),
        );
      const first = signed('pay');
      assert.equal((await s.call('POST', '/v1/pay', { body: { intent: first } })).status, 200);
      const hold = await s.call('POST', '/v1/hold', { body: { intent: signed('hold'), expires_in_seconds: 60 } });
      assert.equal(hold.status, 200);
      for (let i = 0; i < 2; i++) assert.equal((await s.call('POST', '/v1/pay', { body: { intent: signed('pay') } })).status, 200);
      // Forgotten by now (a memory of one): the primary key refuses the group, and the second pass reads the nonce.
      const replays = await Promise.all([
        s.call('POST', '/v1/pay', { body: { intent: first } }),
        s.call('POST', '/v1/pay', { body: { intent: signed('pay') } }),
      ]);
      assert.deepEqual(
        replays.map((response) => response.status),
        [401, 200],
      );
      assert.match(replays[0]?.body.error?.message ?? '', /nonce was already used/);
      const capture = () => s.call('POST', `/v1/hold/${hold.body.data.hold.id}/capture`, { token: payee.token, body: {} });
      assert.equal((await capture()).status, 200);
      const again = await capture();
      assert.deepEqual([again.status, again.body.error?.reason], [409, 'hold_closed']);
      assert.equal((await s.call('GET', '/v1/balance', { token: payer.token })).body.data.balance, '95.000000', 'four pays and one capture of 1');
    });
  });
}
