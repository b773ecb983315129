import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { privateKeyFromSeed, publicKeyHex } from '@platform/kit/auth/ed25519';
import { formatAmount } from '@platform/kit/money';
import { openCheckpoint } from '@platform/kit/receipt-log/checkpoint';
import { verifyInclusion } from '@platform/kit/receipt-log/merkle-log';
import type { SignedReceipt } from '@platform/kit/receipt-log/receipt';
import { receiptLeafHash, verifyReceipt } from '@platform/kit/receipt-log/receipt';
import pg from 'pg';
import type { TransferView } from '../src/ledger/views.ts';
import { call, eachLimited, handshake, type Agent as Payer, type Reply, show, wholeFeed } from './process-client.ts';
import type { ProcessExit, ServiceProcess } from './service-process.ts';
import { startServiceProcess } from './service-process.ts';

/*
 * The real service in a child process on real PostgreSQL: pay under load, SIGKILL it with requests in flight,
 * start it again on the same database, and check that every acknowledged pay is there with the seq and the
 * signed receipt it was acknowledged with, that the unacknowledged ones land at most once, and that the
 * money still adds up. Every assertion is on outcomes: how many pays land before the kill varies from run
 * to run, what must hold of them does not.
 */

const adminUrl = process.env.TEST_DATABASE_URL;
const sequencerSeedHex = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const sequencerPublicKey = publicKeyHex(privateKeyFromSeed(sequencerSeedHex));
const payerCount = 20;
const payeeCount = 8;
const faucetAmount = '1000';
const faucetMicros = 1_000_000_000n;
const loadLoops = 32;
/** The kill comes with this many pays acknowledged: by count, so a slow machine only makes the test slower. */
const killAfterAcks = 400;
/** Then this many answers go unread before the kill: committed pays the client never saw acknowledged. */
const unreadBeforeKill = 24;
/** Attempts at the readiness probe while a fresh process takes the sequencer lock (one round trip apiece). */
const maxReadyAttempts = 5_000;
const replayConcurrency = 16;

/** One pay the load sent, whatever became of it. The ref is derived from the key, so the feed names the request. */
interface PayRequest {
  key: string;
  ref: string;
  payer: Payer;
  to: string;
  micros: bigint;
}
interface Acknowledged extends PayRequest {
  seq: number;
  receipt: SignedReceipt;
}
type Transfer = TransferView;

describe('settlement on PostgreSQL survives SIGKILL under load', { skip: adminUrl ? false : 'needs TEST_DATABASE_URL', timeout: 120_000 }, () => {
  const databaseName = `crash_${randomBytes(6).toString('hex')}`;
  const started: ServiceProcess[] = [];
  let databaseCreated = false;
  let dataDir: string | undefined;
  let env: Record<string, string>;

  before(async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`create database ${databaseName}`);
      databaseCreated = true;
    } finally {
      await admin.end();
    }
    dataDir = await mkdtemp(join(tmpdir(), 'settlement-crash-'));
    const databaseUrl = new URL(adminUrl as string);
    databaseUrl.pathname = `/${databaseName}`;
    env = {
      DATABASE_URL: databaseUrl.toString(),
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      SETTLEMENT_DEV: 'true',
      SETTLEMENT_SEQUENCER_KEY: sequencerSeedHex,
      SETTLEMENT_RATE_WRITE: '1000000/1000000',
      SETTLEMENT_RATE_READ: '1000000/1000000',
      SETTLEMENT_RATE_AUTH: '1000000/1000000',
      SETTLEMENT_AGENT_AUTH_SECRET: 'crash-test-agent-auth-secret',
      SETTLEMENT_TAKEOVER_POLL_MS: '100',
    };
  });

  after(async () => {
    // Whatever failed above: no process outlives the test, then the database and the data directory go.
    const problems: unknown[] = [];
    await Promise.all(started.map((service) => service.kill('SIGTERM', 5_000).catch((error: unknown) => problems.push(error))));
    if (databaseCreated) {
      const admin = new pg.Client({ connectionString: adminUrl });
      try {
        await admin.connect();
        await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [databaseName]);
        await admin.query(`drop database if exists ${databaseName}`);
      } catch (error) {
        problems.push(error);
      } finally {
        await admin.end().catch(() => undefined);
      }
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (problems.length > 0) throw new AggregateError(problems, 'cleaning up after the crash test failed');
  });

  async function startService(): Promise<ServiceProcess> {
    const service = await startServiceProcess(env);
    started.push(service);
    return service;
  }

  /**
   * Repeats `attempt` while the instance answers the sequencer-not-here 503 (a fresh process has not taken
   * the lock yet); any other answer is returned. Bounded by attempts, yielding to the event loop between them.
   */
  async function whenWritable(service: ServiceProcess, what: string, attempt: () => Promise<Reply>): Promise<Reply> {
    let last: Reply | undefined;
    for (let tries = 0; tries < maxReadyAttempts; tries++) {
      last = await attempt();
      if (!(last.status === 503 && last.body.error?.code === 'unavailable' && last.body.error.retryable === true)) return last;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`${what}: still 503 after ${maxReadyAttempts} attempts (${last ? show(last) : 'no answer'}); service output:\n${service.output()}`);
  }

  const payBody = (request: PayRequest) => ({ to: request.to, amount: formatAmount(request.micros), ref: request.ref, idempotency_key: request.key });
  const pay = (base: string, request: PayRequest) => call(base, 'POST', '/v1/pay', { token: request.payer.token, body: payBody(request) });

  test('every acknowledged pay keeps its seq and receipt across a SIGKILL, none is doubled, money adds up', async (t) => {
    const startedAt = performance.now();
    const first = await startService();

    // Accounts: funded payers (the faucet records a deposit, so supply stays equal to the reserve) and payees.
    const payers = await Promise.all(Array.from({ length: payerCount }, () => handshake(first.url)));
    const payees = Array.from({ length: payeeCount }, () => generateAgentKey().did);
    const [someone] = payers as [Payer];
    // Closing an empty window writes nothing: a harmless way to wait for this process to become the sequencer.
    const probe = await whenWritable(first, 'the first process takes the sequencer lock', () =>
      call(first.url, 'POST', '/v1/settle', { token: someone.token }),
    );
    assert.equal(probe.status, 200, show(probe));
    assert.equal(probe.body.data.closed, false, 'nothing was written before the faucets');
    for (const reply of await Promise.all(
      payers.map((payer) => call(first.url, 'POST', '/v1/dev/faucet', { token: payer.token, body: { amount: faucetAmount } })),
    ))
      assert.equal(reply.status, 200, show(reply));

    // Load: loops that each send the next pay as soon as the last one is answered, so at the kill every other loop
    // has a request outstanding. A failed connection is an unknown outcome (it may have committed) and ends its loop.
    // After `killAfterAcks` acknowledgements the client stops reading answers for `unreadBeforeKill` more pays, as
    // one whose connection broke after the server wrote would: committed, never acknowledged. That makes the
    // case a replay must not double certain to occur, where the kill alone only catches it when a COMMIT happens
    // to be in flight.
    const run = randomBytes(4).toString('hex');
    let sent = 0;
    const newRequest = (): PayRequest => {
      const n = sent++;
      const key = `crash-${run}-${n}`;
      return {
        key,
        ref: `0x${createHash('sha256').update(key).digest('hex')}`,
        payer: payers[n % payerCount] as Payer,
        to: payees[n % payeeCount] as string,
        micros: BigInt((n % 97) + 1) * 10_000n,
      };
    };
    const acknowledged: Acknowledged[] = [];
    /** Answered 200 but left unread by the client: their seq is known to the test, not to the client. */
    const unread: Acknowledged[] = [];
    /** The connection failed (the kill): committed or not, nobody knows. */
    const unanswered: PayRequest[] = [];
    const refused: string[] = [];
    let inFlight = 0;
    let inFlightAtKill = 0;
    let crashed: Promise<ProcessExit> | undefined;
    const killed = Promise.withResolvers<void>();
    const loop = async () => {
      while (crashed === undefined) {
        const request = newRequest();
        let reply: Reply;
        inFlight++;
        try {
          reply = await pay(first.url, request);
        } catch {
          unanswered.push(request);
          return;
        } finally {
          inFlight--;
        }
        if (reply.status !== 200) {
          refused.push(`${request.key}: ${show(reply)}`);
          return;
        }
        const answered = { ...request, seq: reply.body.data.seq as number, receipt: reply.body.data.receipt as SignedReceipt };
        // Answers that arrive after the kill was sent were written by the server before it died: real acknowledgements.
        if (acknowledged.length < killAfterAcks || crashed !== undefined) acknowledged.push(answered);
        else unread.push(answered);
        if (unread.length === unreadBeforeKill && crashed === undefined) {
          inFlightAtKill = inFlight;
          crashed = first.kill('SIGKILL');
          killed.resolve();
        }
      }
    };
    const loops = Promise.all(Array.from({ length: loadLoops }, loop));
    await Promise.race([killed.promise, loops]);
    assert.deepEqual(refused, [], 'no pay is refused under load');
    assert.ok(crashed, `the load reached the kill (${acknowledged.length} acknowledged, ${unread.length} unread); output:\n${first.output()}`);
    assert.deepEqual(await crashed, { code: null, signal: 'SIGKILL' });
    await loops;
    assert.deepEqual(refused, [], 'no pay is refused under load');
    assert.ok(inFlightAtKill > 0, 'requests were in flight when the process was killed');
    assert.equal(acknowledged.length + unread.length + unanswered.length, sent, 'every pay sent is acknowledged, unread or unanswered');
    /** Every pay whose outcome the client does not know. */
    const unknown: PayRequest[] = [...unread, ...unanswered];
    const loadDone = performance.now();

    // Restart on the same database. The probe is a replay of an acknowledged pay: it writes nothing new.
    const second = await startService();
    const [probePay] = acknowledged as [Acknowledged];
    const replayed = await whenWritable(second, 'the restarted process takes the sequencer lock', () => pay(second.url, probePay));
    assert.equal(replayed.status, 200, show(replayed));
    assert.equal(replayed.body.data.seq, probePay.seq);
    const writableAt = performance.now();

    // The log as the crash left it, before any unknown outcome is replayed.
    const afterCrash = await wholeFeed(second.url);
    assert.deepEqual(
      afterCrash.map((transfer) => transfer.seq),
      Array.from({ length: afterCrash.length }, (_, i) => i + 1),
      'the seqs after the crash are 1..N without a gap',
    );
    const bySeq = new Map(afterCrash.map((transfer) => [transfer.seq, transfer]));
    const byRef = new Map<string, Transfer>();
    for (const transfer of afterCrash.filter((entry) => entry.kind === 'transfer')) {
      assert.ok(
        !byRef.has(transfer.ref),
        `ref ${transfer.ref} (one pay request) has one receipt, not seqs ${byRef.get(transfer.ref)?.seq} and ${transfer.seq}`,
      );
      byRef.set(transfer.ref, transfer);
    }

    // Every acknowledged pay: in the log at its seq with its terms, and its receipt as acknowledged, signature and all.
    for (const ack of acknowledged) {
      assert.deepEqual(
        { kind: ack.receipt.kind, from: ack.receipt.from, to: ack.receipt.to, amount: ack.receipt.amount, ref: ack.receipt.ref, seq: ack.receipt.seq },
        { kind: 'transfer', from: ack.payer.did, to: ack.to, amount: formatAmount(ack.micros), ref: ack.ref, seq: ack.seq },
        `the receipt acknowledged for ${ack.key} matches its request`,
      );
      const logged = bySeq.get(ack.seq);
      assert.ok(logged, `acknowledged seq ${ack.seq} (${ack.key}) survived the crash`);
      assert.deepEqual(
        logged,
        { seq: ack.seq, kind: 'transfer', from: ack.payer.did, to: ack.to, amount: formatAmount(ack.micros), ref: ack.ref, hold_id: null, at: ack.receipt.at },
        `seq ${ack.seq} is still ${ack.key}`,
      );
    }
    await eachLimited(acknowledged, replayConcurrency, async (ack) => {
      const served = await call(second.url, 'GET', `/v1/receipt/${ack.seq}`);
      assert.equal(served.status, 200, show(served));
      assert.deepEqual(served.body.data.receipt, ack.receipt, `the receipt served for seq ${ack.seq} is the one acknowledged`);
      const verified = await verifyReceipt(served.body.data.receipt, sequencerPublicKey);
      assert.ok(verified.ok, `seq ${ack.seq}: ${verified.ok ? '' : verified.reason}`);
    });

    // Replaying every acknowledged request answers its original seq and receipt; nothing new is written.
    await eachLimited(acknowledged, replayConcurrency, async (ack) => {
      const again = await pay(second.url, ack);
      assert.equal(again.status, 200, show(again));
      assert.deepEqual(again.body.data, { seq: ack.seq, receipt: ack.receipt }, `replaying ${ack.key}`);
    });

    // Unknown outcomes: a replay answers the seq it landed at before the crash, or lands it now, after the old log.
    const landedBeforeCrash = unknown.filter((request) => byRef.has(request.ref)).length;
    const unansweredLanded = unanswered.filter((request) => byRef.has(request.ref)).length;
    const unreadByRef = new Map(unread.map((answered) => [answered.ref, answered]));
    for (const answered of unread) {
      assert.equal(byRef.get(answered.ref)?.seq, answered.seq, `${answered.key}, answered but never read, is in the log at the seq it was given`);
    }
    const knownRefs = new Set([...acknowledged, ...unknown].map((request) => request.ref));
    for (const ref of byRef.keys()) assert.ok(knownRefs.has(ref), `every transfer in the log is one of the pays sent (${ref})`);
    assert.equal(byRef.size, acknowledged.length + landedBeforeCrash, 'the log holds the acknowledged pays and the unknown ones that landed, nothing else');
    await eachLimited(unknown, replayConcurrency, async (request) => {
      const again = await pay(second.url, request);
      assert.equal(again.status, 200, show(again));
      const before = byRef.get(request.ref);
      const answered = unreadByRef.get(request.ref);
      if (answered) assert.deepEqual(again.body.data, { seq: answered.seq, receipt: answered.receipt }, `replaying ${request.key}, answered but unread`);
      if (before) assert.equal(again.body.data.seq, before.seq, `${request.key} landed before the crash at seq ${before.seq}: its replay answers that seq`);
      else assert.ok(again.body.data.seq > afterCrash.length, `${request.key} had not landed: it lands now, after the old log`);
      const once = await pay(second.url, request);
      assert.deepEqual(once.body.data, again.body.data, `a second replay of ${request.key} answers the same`);
    });

    // The final log: gap-free, each pay sent exactly once, and each payer's own feed holding its deposit and its pays.
    const final = await wholeFeed(second.url);
    assert.deepEqual(
      final.map((transfer) => transfer.seq),
      Array.from({ length: final.length }, (_, i) => i + 1),
      'the seqs are 1..N without a gap',
    );
    assert.deepEqual(final.slice(0, afterCrash.length), afterCrash, 'replays changed nothing already in the log');
    const transfers = final.filter((entry) => entry.kind === 'transfer');
    assert.equal(transfers.length, sent, 'one transfer per pay sent');
    assert.deepEqual(new Set(transfers.map((transfer) => transfer.ref)), knownRefs, 'each pay sent appears exactly once');
    assert.equal(final.length - transfers.length, payerCount, 'the rest are the faucet deposits');
    const requests = [...acknowledged, ...unknown];
    await eachLimited(payers, 4, async (payer) => {
      const own = await wholeFeed(second.url, payer.did);
      const mine = requests.filter((request) => request.payer.did === payer.did).length;
      assert.equal(own.length, 1 + mine, `${payer.did}: its deposit and its ${mine} pays`);
    });

    // Money: every balance as the pays sent say, none negative, the total what the faucet gave, fully reserved.
    const expected = new Map<string, bigint>(payers.map((payer) => [payer.did, faucetMicros]));
    for (const request of requests) {
      expected.set(request.payer.did, (expected.get(request.payer.did) as bigint) - request.micros);
      expected.set(request.to, (expected.get(request.to) ?? 0n) + request.micros);
    }
    let total = 0n;
    for (const [did, micros] of expected) {
      const account = await call(second.url, 'GET', `/v1/account/${did}`);
      assert.equal(account.status, 200, show(account));
      assert.ok(micros >= 0n, `${did} would not go negative`);
      assert.deepEqual({ balance: account.body.data.balance, held: account.body.data.held }, { balance: formatAmount(micros), held: '0.000000' }, did);
      total += micros;
    }
    assert.equal(total, faucetMicros * BigInt(payerCount), 'payers and payees together hold exactly what the faucet gave');
    const supply = await call(second.url, 'GET', '/v1/supply');
    assert.equal(supply.status, 200, show(supply));
    assert.equal(supply.body.data.supply, formatAmount(total));
    assert.equal(supply.body.data.fully_reserved, true, show(supply));

    // The Merkle log the restarted sequencer rebuilt from the database closes into a checkpoint that proves every
    // acknowledged receipt at its seq.
    const info = await call(second.url, 'GET', '/v1/info');
    assert.equal(info.status, 200, show(info));
    const settled = await call(second.url, 'POST', '/v1/settle', { token: someone.token });
    assert.equal(settled.status, 200, show(settled));
    assert.equal(settled.body.data.closed, true, show(settled));
    const batch = settled.body.data.batch;
    assert.deepEqual(
      { first_seq: batch.first_seq, last_seq: batch.last_seq, log_size: batch.log_size },
      { first_seq: 1, last_seq: final.length, log_size: final.length },
    );
    const checkpoint = await openCheckpoint(batch.checkpoint, info.body.data.checkpoint_verifier_key);
    assert.ok(checkpoint.ok, `the checkpoint opens: ${checkpoint.ok ? '' : checkpoint.reason}`);
    assert.equal(checkpoint.treeSize, final.length);
    await eachLimited(acknowledged, replayConcurrency, async (ack) => {
      const served = await call(second.url, 'GET', `/v1/receipt/${ack.seq}`);
      assert.equal(served.status, 200, show(served));
      const proof = (served.body.data.inclusion_proof as string[]).map((hash) => Buffer.from(hash.slice(2), 'hex'));
      assert.ok(
        await verifyInclusion(receiptLeafHash(ack.receipt), ack.seq - 1, checkpoint.treeSize, proof, checkpoint.rootHash),
        `the checkpoint proves the receipt acknowledged at seq ${ack.seq}`,
      );
    });

    t.diagnostic(
      `${acknowledged.length} acknowledged, ${unread.length} answered but unread, ${unanswered.length} unanswered at the kill ` +
        `(${inFlightAtKill} in flight, ${unansweredLanded} of them had committed); load ${Math.round(loadDone - startedAt)} ms, ` +
        `restart to writable ${Math.round(writableAt - loadDone)} ms, total ${Math.round(performance.now() - startedAt)} ms`,
    );
  });
});
