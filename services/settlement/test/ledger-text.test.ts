import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { type AgentKey, generateAgentKey } from '@platform/client/agent-key';
import type { SettlementIntent } from '@platform/kit/settlement-intent';
import { testEngines } from '@platform/testkit/databases';
import type { Command } from '../src/ledger/commands.ts';
import { operatorToken, type Settlement, signedIntent, startSettlement } from './harness.ts';

/*
 * PostgreSQL's text cannot hold NUL and jsonb refuses a lone surrogate, so one such string in one command once failed
 * the sequencer's whole group statement and stepped it down: 503 for everyone for a poll period. Text is refused at
 * the door, naming the field; and a command the database refuses anyway fails alone, the writer staying the writer.
 */

const nul = 'a\u0000b';
const loneSurrogate = 'a\ud800b';
/** A DID of the spec's form whose label (`[^:]+`) holds text the ledger cannot store. */
const didWith = (label: string) => generateAgentKey(label).did;

for (const engine of testEngines()) {
  describe(`text the ledger cannot store, ${engine.name}`, () => {
    let s: Settlement;
    afterEach(async () => s?.close());

    /** A payer's signed intent, with terms of the test's choosing (its DIDs above all). */
    const intent = (key: AgentKey, terms: Partial<SettlementIntent>) => signedIntent(key, s.clock.now(), { amount: '1', ...terms }).wire;

    test('is refused before it is queued, 400 naming the field (an intent’s: 401 intent_invalid); the sequencer stays', async () => {
      s = await startSettlement(engine);
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const holdId = (await s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount: '1' } })).body.data.hold.id;
      const strangerKey = generateAgentKey(nul);
      const refusals: Array<[string, Promise<Awaited<ReturnType<Settlement['call']>>>, string]> = [];
      for (const bad of [nul, loneSurrogate]) {
        const pays = (body: object) => s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1', ...body } });
        refusals.push(
          ['pay idempotency_key', pays({ idempotency_key: bad }), 'idempotency_key'],
          ['pay to', pays({ to: didWith(bad) }), 'to'],
          [
            'hold idempotency_key',
            s.call('POST', '/v1/hold', { token: payer.token, body: { to: payee.did, amount: '1', idempotency_key: bad } }),
            'idempotency_key',
          ],
          ['capture', s.call('POST', `/v1/hold/${holdId}/capture`, { token: payee.token, body: { idempotency_key: bad } }), 'idempotency_key'],
          ['release', s.call('POST', `/v1/hold/${holdId}/release`, { token: payee.token, body: { idempotency_key: bad } }), 'idempotency_key'],
          ['withdraw', s.call('POST', '/v1/withdraw', { token: payer.token, body: { amount: '1', idempotency_key: bad } }), 'idempotency_key'],
          [
            'operator deposit',
            s.call('POST', '/v1/operator/deposits', {
              bearer: operatorToken,
              body: { did: didWith(bad), amount: '1', tx_hash: `0x${'d'.repeat(64)}`, log_index: 1 },
            }),
            'did',
          ],
        );
      }
      // A URL cannot carry a lone surrogate (it has no UTF-8 to percent-encode); a NUL it can.
      const nulDid = encodeURIComponent(didWith(nul));
      refusals.push(['account', s.call('GET', `/v1/account/${nulDid}`), 'did'], ['transfers', s.call('GET', `/v1/transfers?did=${nulDid}`), 'did']);
      for (const [what, answer, field] of refusals) {
        const { status, body } = await answer;
        assert.deepEqual([status, body.error?.code], [400, 'invalid_request'], `${what}: ${JSON.stringify(body)}`);
        assert.match(String(body.error?.field), new RegExp(field), what);
      }
      // A batch carrying such text is one request the kit refuses at the edge, naming the item (its sender, the
      // marketplace, refuses such text from its own callers first, so one caller never fails another's items).
      const batch = await s.call('POST', '/v1/hold/batch', {
        token: payer.token,
        body: {
          items: [
            { to: payee.did, amount: '1', idempotency_key: nul },
            { to: payee.did, amount: '1' },
          ],
        },
      });
      assert.deepEqual([batch.status, batch.body.error?.code, batch.body.error?.field], [400, 'invalid_request', 'items[0].idempotency_key']);
      // Inside a signed intent the DIDs are out of the kit's sight (base64url): the intent is at fault, as a forged one is.
      // A lone surrogate cannot even be signed (RFC 8785 has no form for it), so that wire is written by hand.
      const signed = JSON.parse(Buffer.from(intent(payer.key, {}), 'base64url').toString('utf8'));
      signed.intent.to = didWith(loneSurrogate);
      const unsignable = Buffer.from(JSON.stringify(signed)).toString('base64url');
      for (const wire of [intent(strangerKey, {}), unsignable]) {
        const refused = await s.call('POST', '/v1/pay', { body: { intent: wire } });
        assert.deepEqual([refused.status, refused.body.error?.reason], [401, 'intent_invalid'], JSON.stringify(refused.body));
      }
      assert.equal(s.sequencer.role, 'sequencer');
      const after = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1' } });
      assert.equal(after.status, 200, JSON.stringify(after.body));
      assert.equal((await s.call('GET', `/v1/account/${payer.did}`)).body.data.balance, '8.000000', 'the hold and the last pay, nothing of the refused batch');
    });

    test('a command the database refuses, in one group with good ones, fails alone: the others land, the sequencer stays', async () => {
      s = await startSettlement(engine);
      const payer = await s.fundedAgent('10');
      const payee = await s.agent();
      const pay = (extra: Partial<Command & { kind: 'pay' }> = {}): Command => ({
        kind: 'pay',
        from: payer.did,
        to: payee.did,
        micros: 1_000_000n,
        ref: '',
        ...extra,
      });
      // Past the routes' checks (a bug that let them through), in the same turn, so the writer takes them as one group.
      const submitted = [
        pay(),
        // Text the database cannot store: the writer refuses it before it queues it, as the routes do.
        pay({ idempotency: { key: nul, requestHash: 'h1' } }),
        pay(),
        // Refused by the database itself: a log index past `integer` when written, a hold id that is not a UUID when read.
        { kind: 'deposit', did: payee.did, micros: 1_000_000n, source: 'chain', txHash: `0x${'e'.repeat(64)}`, logIndex: 2 ** 40 },
        { kind: 'capture', caller: payee.did, holdId: 'not-a-uuid', micros: undefined },
        // A command that throws while it is applied (a bug in the rules) leaves the group's staged rows half changed.
        pay({ micros: 'one' as unknown as bigint }),
        pay(),
      ].map((command) => s.sequencer.submit(command as Command));
      const outcomes = await Promise.allSettled(submitted);
      const refusal = (index: number) => {
        const outcome = outcomes[index];
        assert.equal(outcome?.status, 'rejected', `command ${index} was refused`);
        const { code, details } = (outcome as PromiseRejectedResult).reason;
        return [code, details?.field];
      };
      assert.deepEqual(
        [refusal(1), refusal(3), refusal(4), refusal(5)],
        [
          ['invalid_request', 'idempotency_key'],
          ['invalid_request', undefined],
          ['invalid_request', undefined],
          ['internal', undefined],
        ],
      );
      const seqs = [0, 2, 6].map((index) => {
        const outcome = outcomes[index] as PromiseFulfilledResult<{ seq: number }>;
        assert.equal(outcome.status, 'fulfilled', `command ${index} landed`);
        return outcome.value.seq;
      });
      assert.deepEqual(seqs, [seqs[0], (seqs[0] as number) + 1, (seqs[0] as number) + 2], 'the seq has no gap');
      assert.equal(s.sequencer.role, 'sequencer', 'nobody was answered 503: the writer never stepped down');
      assert.equal((await s.call('GET', `/v1/account/${payer.did}`)).body.data.balance, '7.000000');
      assert.equal((await s.call('GET', `/v1/account/${payee.did}`)).body.data.balance, '3.000000');
      const receipts = await s.database.db.selectFrom('receipts').select('seq').where('kind', '=', 'transfer').execute();
      assert.deepEqual(
        receipts.map((row) => Number(row.seq)),
        seqs,
      );
      const next = await s.call('POST', '/v1/pay', { token: payer.token, body: { to: payee.did, amount: '1', idempotency_key: 'after' } });
      assert.deepEqual([next.status, next.body.data?.seq], [200, (seqs[2] as number) + 1]);
    });
  });
}
