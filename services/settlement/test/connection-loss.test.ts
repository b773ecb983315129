import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { pollUntil } from '@platform/testkit/eventually';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import pg from 'pg';
import { type Agent, call, handshake, type Reply, show, wholeFeed } from './process-client.ts';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';

/*
 * What a PostgreSQL restart or failover does to the service: every backend of its database ends
 * (`pg_terminate_backend`, 57P01). Two real processes share one database, the sequencer and a standby. Idle, then
 * under load, every backend is terminated: neither process exits, one of them takes the sequencer lock again on a
 * new session without being asked to write, the other stands by, every answer meanwhile is 200 or a retryable 503
 * with Retry-After, and every acknowledged pay is in the log exactly once.
 */

const adminUrl = process.env.TEST_DATABASE_URL;
const sequencerSeedHex = '8f2a1c0e5b7d4a3f9e6c2b1a0d8f7e6c5b4a3928171605f4e3d2c1b0a9f8e7d6';
const payerCount = 8;
const loadLoops = 16;
/** The backends end once this many pays are acknowledged, and the load stops this many acknowledgements later. */
const acksBeforeLoss = 150;
const acksAfterLoss = 150;

describe('settlement on PostgreSQL survives losing every database connection', { skip: adminUrl ? false : 'needs TEST_DATABASE_URL', timeout: 120_000 }, () => {
  let database: TempDatabase;
  let admin: pg.Client;
  let dataDir: string;
  const instances: ServiceProcess[] = [];
  let payers: Agent[] = [];
  const payee = generateAgentKey().did;

  before(async () => {
    database = await createTempDatabase(adminUrl as string, 'platform');
    admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    dataDir = await mkdtemp(join(tmpdir(), 'settlement-connection-loss-'));
    const env = {
      DATABASE_URL: database.url,
      PORT: '0',
      DATA_DIR: dataDir,
      SETTLEMENT_DEV: 'true',
      SETTLEMENT_SEQUENCER_KEY: sequencerSeedHex,
      SETTLEMENT_RATE_WRITE: '1000000/1000000',
      SETTLEMENT_RATE_READ: '1000000/1000000',
      SETTLEMENT_RATE_AUTH: '1000000/1000000',
      SETTLEMENT_TAKEOVER_POLL_MS: '100',
    };
    // One after the other: the first takes the lock, the second stands by.
    instances.push(await startServiceProcess(env));
    await pollUntil(async () => (await role(0)) === 'sequencer', 'the first instance is the sequencer', { intervalMs: 20 });
    instances.push(await startServiceProcess(env));
    payers = await Promise.all(Array.from({ length: payerCount }, () => handshake(instances[0]?.url as string)));
    for (const payer of payers) {
      const funded = await call(instances[0]?.url as string, 'POST', '/v1/dev/faucet', { token: payer.token, body: { amount: '1000' } });
      assert.equal(funded.status, 200, show(funded));
    }
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.kill('SIGTERM', 5_000)));
    await admin?.end();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const role = async (index: number) => (await call(instances[index]?.url as string, 'GET', '/v1/info')).body.data?.role as string | undefined;
  /** The backend holding the sequencer's advisory lock, if one does. */
  async function lockHolder(): Promise<number | undefined> {
    const { rows } = await admin.query<{ pid: number }>(
      `select l.pid from pg_locks l join pg_stat_activity a on a.pid = l.pid where l.locktype = 'advisory' and l.granted and a.datname = $1`,
      [database.name],
    );
    return rows[0]?.pid;
  }
  async function terminateEveryBackend(): Promise<number> {
    const { rows } = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
      database.name,
    ]);
    return rows.length;
  }
  /** Both processes are still running: a lost connection must never end one. */
  async function bothAlive(): Promise<void> {
    for (const instance of instances) {
      const exited = await Promise.race([instance.exited, Promise.resolve(undefined)]);
      assert.equal(exited, undefined, `an instance exited; its output:\n${instance.output()}`);
    }
  }
  /**
   * Polls until exactly one instance says it is the sequencer, on a session other than `old`, and has said so on three
   * polls in a row (an instance that lost its session believes it leads until its next probe, up to a takeover poll
   * period: a single reading could catch the two in passing); answers its index.
   */
  async function newSequencer(old: number | undefined): Promise<number> {
    let leader = -1;
    let steady = 0;
    await pollUntil(
      async () => {
        const holder = await lockHolder();
        const roles = await Promise.all([role(0), role(1)]).catch((): Array<string | undefined> => []);
        const now = roles.indexOf('sequencer');
        const settled = holder !== undefined && holder !== old && roles.filter((r) => r === 'sequencer').length === 1 && roles.includes('standby');
        steady = settled && now === leader ? steady + 1 : settled ? 1 : 0;
        leader = now;
        return steady >= 3;
      },
      () => `a sequencer on a new session and a standby, outputs:\n${instances.map((instance) => instance.output()).join('\n---\n')}`,
      { timeoutMs: 30_000, intervalMs: 60 },
    );
    return leader;
  }
  const pay = (base: string, payer: Agent, key: string) =>
    call(base, 'POST', '/v1/pay', {
      token: payer.token,
      body: { to: payee, amount: '0.01', idempotency_key: key, ref: `0x${createHash('sha256').update(key).digest('hex')}` },
    });

  test('idle: neither process exits; the lock is taken again on a new session before anyone writes, and the seq goes on', async () => {
    const leader = (await role(0)) === 'sequencer' ? 0 : 1;
    const first = await pay(instances[leader]?.url as string, payers[0] as Agent, 'idle-before');
    assert.equal(first.status, 200, show(first));
    const holder = await lockHolder();
    assert.ok(holder !== undefined, 'the sequencer holds its lock');
    assert.ok((await terminateEveryBackend()) >= 2, 'the backends of both instances ended');
    const next = await newSequencer(holder);
    await bothAlive();
    const standby = await pay(instances[1 - next]?.url as string, payers[0] as Agent, 'idle-to-standby');
    assert.deepEqual([standby.status, standby.body.error?.code, standby.body.error?.retryable, standby.retryAfter], [503, 'unavailable', true, '1']);
    const paid = await pay(instances[next]?.url as string, payers[0] as Agent, 'idle-after');
    assert.equal(paid.status, 200, show(paid));
    assert.equal(paid.body.data.seq, first.body.data.seq + 1, 'no gap, nothing lost');
    const receipt = await call(instances[next]?.url as string, 'GET', `/v1/receipt/${first.body.data.seq}`);
    assert.deepEqual(receipt.body.data?.receipt, first.body.data.receipt);
  });

  test('under load: every answer is 200 or a retryable 503 with Retry-After, and every acknowledged pay is there once', async (t) => {
    const acknowledged = new Map<string, number>();
    const unexpected: string[] = [];
    let unavailable = 0;
    let sent = 0;
    let lossAt: number | undefined;
    let lost: Promise<number> | undefined;
    let target = (await role(0)) === 'sequencer' ? 0 : 1;
    const done = () => lossAt !== undefined && acknowledged.size >= lossAt + acksAfterLoss;
    const loop = async () => {
      while (!done() && unexpected.length === 0) {
        const n = sent++;
        const key = `load-${n}`;
        const payer = payers[n % payerCount] as Agent;
        // A 503 is retried with the same key, on the other instance (as the instance front does): it lands once.
        for (let attempt = 0; ; attempt++) {
          let reply: Reply;
          try {
            reply = await pay(instances[target]?.url as string, payer, key);
          } catch (error) {
            unexpected.push(`${key}: no answer (${(error as Error).message})`);
            return;
          }
          if (reply.status === 200) {
            acknowledged.set(key, reply.body.data.seq);
            break;
          }
          const retryable = reply.status === 503 && reply.body.error?.code === 'unavailable' && reply.body.error.retryable && reply.retryAfter === '1';
          if (!retryable || attempt > 5_000) {
            unexpected.push(`${key}: ${show(reply)} retry-after ${reply.retryAfter}`);
            return;
          }
          unavailable++;
          target = 1 - target;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        if (lost === undefined && acknowledged.size >= acksBeforeLoss) {
          lossAt = acknowledged.size;
          lost = terminateEveryBackend();
        }
      }
    };
    await Promise.all(Array.from({ length: loadLoops }, loop));
    assert.deepEqual(unexpected, []);
    assert.ok(((await lost) ?? 0) >= 2, 'the backends ended under load');
    await bothAlive();
    const leader = await newSequencer(undefined);

    const feed = await wholeFeed(instances[leader]?.url as string);
    assert.deepEqual(
      feed.map((entry) => entry.seq),
      Array.from({ length: feed.length }, (_, i) => i + 1),
      'the seqs are 1..N without a gap',
    );
    const bySeq = new Map(feed.map((entry) => [entry.seq, entry]));
    const refs = feed.filter((entry) => entry.kind === 'transfer').map((entry) => entry.ref);
    assert.equal(new Set(refs).size, refs.length, 'no pay landed twice');
    for (const [key, seq] of acknowledged) {
      assert.equal(bySeq.get(seq)?.ref, `0x${createHash('sha256').update(key).digest('hex')}`, `${key}, acknowledged at seq ${seq}, is there`);
    }
    t.diagnostic(`${acknowledged.size} acknowledged (${lossAt} before the loss), ${unavailable} answers 503 and retried`);
  });
});
