import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { privateKeyFromSeed, publicKeyHex } from '@platform/kit/auth/ed25519';
import { localBuckets } from '@platform/kit/http/rate-limit';
import { verifyReceipt } from '@platform/kit/receipt-log/receipt';
import { silentLogger, type TestEngine, testEngines } from '@platform/testkit/databases';
import { eventually, pollUntil } from '@platform/testkit/eventually';
import { assertBoundedLabels, metricDeltas } from '@platform/testkit/metrics-text';
import { openSse } from '@platform/testkit/sse-client';
import { createTempDatabase, type TempDatabase } from '@platform/testkit/temp-database';
import { FrontThreads } from '../src/http-front/front-threads.ts';
import { agentAuthSecret, type Settlement, startSettlement } from './harness.ts';
import { type ServiceProcess, startServiceProcess } from './service-process.ts';

const lenientRates = {
  read: { perSecond: 1_000_000, burst: 1_000_000 },
  write: { perSecond: 1_000_000, burst: 1_000_000 },
  auth: { perSecond: 1_000_000, burst: 1_000_000 },
};

/*
 * The service with front threads (SETTLEMENT_HTTP_THREADS=2), as a real process: every connection is its own,
 * so the kernel spreads them over both threads. The movement routes answer from the threads, every other route
 * is relayed to the sequencer thread's app, and what a client sees must be what it sees without threads: the
 * same answers and errors, one rate limit per address whichever thread took the connection, the event stream,
 * and a clean stop. One process per engine serves every case.
 */

const ledgerToken = 'front-threads-ledger-token';
const metricsToken = 'front-threads-metrics-token';
const sequencerSeedHex = 'a3f1c2d4e5b60718293a4b5c6d7e8f90112233445566778899aabbccddeeff00';
const sequencerKey = publicKeyHex(privateKeyFromSeed(sequencerSeedHex));
const writeBurst = 5;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: each route answers its own shape.
  json: any;
  text: string;
}

/** One request on a connection of its own (`agent: false`), so consecutive requests land on either thread. */
function request(base: string, method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = http.request(new URL(path, base), { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json, text });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const fleet = { authorization: `Bearer ${ledgerToken}` };
const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { ...fleet, 'content-type': 'application/json' } });

for (const engine of ['pglite', 'postgres'] as const) {
  describe(`front threads (${engine})`, { skip: engine === 'postgres' && !process.env.TEST_DATABASE_URL }, () => {
    let service: ServiceProcess;
    let dataDir: string;
    let database: TempDatabase | undefined;
    let base: string;

    async function agent(fund?: string): Promise<{ did: string; token: string }> {
      const key = generateAgentKey();
      const challenge = await request(base, 'POST', '/v1/agent/auth/challenge', json({ did: key.did }));
      const verified = await request(
        base,
        'POST',
        '/v1/agent/auth/verify',
        json({ did: key.did, public_key: key.publicKeyHex, nonce: challenge.json.data.nonce, signature: key.sign(challenge.json.data.message) }),
      );
      const token = verified.json.data.token as string;
      if (fund) {
        const funded = await request(base, 'POST', '/v1/dev/faucet', { ...json({ amount: fund }), headers: { ...json({}).headers, 'x-ledger-agent': token } });
        assert.equal(funded.status, 200, funded.text);
      }
      return { did: key.did, token };
    }
    const asAgent = (token: string, body: unknown) => ({
      body: JSON.stringify(body),
      headers: { ...fleet, 'content-type': 'application/json', 'x-ledger-agent': token },
    });

    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'settlement-front-'));
      if (engine === 'postgres') database = await createTempDatabase(process.env.TEST_DATABASE_URL as string);
      service = await startServiceProcess({
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        SETTLEMENT_DEV: 'true',
        SETTLEMENT_HTTP_THREADS: '2',
        SETTLEMENT_SEQUENCER_KEY: sequencerSeedHex,
        LEDGER_TOKEN: ledgerToken,
        PLATFORM_METRICS_TOKEN: metricsToken,
        SETTLEMENT_RATE_WRITE: `0.001/${writeBurst}`,
        ...(database ? { DATABASE_URL: database.url } : {}),
      });
      base = service.url;
      assert.match(service.output(), /"httpThreads":2/);
    });

    after(async () => {
      await service?.kill('SIGKILL');
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    test('pays on many connections are each acknowledged once, with gap-free seqs and receipts that verify; a replay answers the original', async () => {
      const payer = await agent('100');
      const payee = generateAgentKey().did;
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) => request(base, 'POST', '/v1/pay', asAgent(payer.token, { to: payee, amount: '0.5', idempotency_key: `k-${i}` }))),
      );
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      const seqs = answers.map((answer) => answer.json.data.seq as number).sort((a, b) => a - b);
      for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], (seqs[i - 1] as number) + 1);
      for (const answer of answers) assert.equal((await verifyReceipt(answer.json.data.receipt, sequencerKey)).ok, true);
      const replay = await request(base, 'POST', '/v1/pay', asAgent(payer.token, { to: payee, amount: '0.5', idempotency_key: 'k-3' }));
      assert.deepEqual(replay.json, answers[3]?.json);
      const balance = await request(base, 'GET', '/v1/balance', { headers: { ...fleet, 'x-ledger-agent': payer.token } });
      assert.equal(balance.json.data.balance, '88.000000');
    });

    test('a batch of holds and one of their captures through a thread: each item answered in order, a refused one alone', async () => {
      const payer = await agent('10');
      const payee = await agent();
      const items = ['1', '50', '2'].map((amount) => ({ to: payee.did, amount, expires_in_seconds: 60 }));
      const placed = await request(base, 'POST', '/v1/hold/batch', asAgent(payer.token, { items }));
      assert.equal(placed.status, 200, placed.text);
      const [small, tooLarge, other] = placed.json.data.results;
      assert.deepEqual([small.ok, tooLarge.status, tooLarge.error.reason, other.ok], [true, 409, 'insufficient_funds', true]);
      const settled = await request(
        base,
        'POST',
        '/v1/hold/batch/settle',
        asAgent(payee.token, { items: [small, other].map((result) => ({ hold_id: result.data.hold.id, action: 'capture', amount: '0.5' })) }),
      );
      assert.equal(settled.status, 200, settled.text);
      assert.deepEqual(
        settled.json.data.results.map((result: { data: { hold: { status: string } } }) => result.data.hold.status),
        ['captured', 'captured'],
      );
      const balance = await request(base, 'GET', '/v1/balance', { headers: { ...fleet, 'x-ledger-agent': payee.token } });
      assert.equal(balance.json.data.balance, '1.000000');
    });

    test('errors keep their envelopes: 401, 400, 409 with its reason, 413 and 415 from the threads; 404 and the reads relayed', async () => {
      const payer = await agent('1');
      const to = generateAgentKey().did;
      const noToken = await request(base, 'POST', '/v1/pay', json({ to, amount: '0.1' }));
      assert.equal(noToken.status, 401);
      assert.equal(noToken.json.error.code, 'unauthorized');
      const unknownField = await request(base, 'POST', '/v1/pay', asAgent(payer.token, { to, amount: '0.1', amont: '1' }));
      assert.deepEqual([unknownField.status, unknownField.json.error.code], [400, 'invalid_request']);
      const tooMuch = await request(base, 'POST', '/v1/pay', asAgent(payer.token, { to, amount: '5' }));
      assert.equal(tooMuch.status, 409);
      assert.deepEqual(
        { ...tooMuch.json.error },
        { code: 'conflict', message: tooMuch.json.error.message, retryable: false, reason: 'insufficient_funds', available: '1.000000' },
      );
      const large = await request(base, 'POST', '/v1/pay', asAgent(payer.token, { to, amount: '0.1', ref: 'x'.repeat(20_000) }));
      assert.deepEqual([large.status, large.json.error.code], [413, 'payload_too_large']);
      const text = await request(base, 'POST', '/v1/pay', {
        body: 'hello',
        headers: { ...fleet, 'content-type': 'text/plain', 'x-ledger-agent': payer.token },
      });
      assert.deepEqual([text.status, text.json.error.code], [415, 'unsupported_media_type']);
      const missing = await request(base, 'GET', '/v1/nowhere');
      assert.deepEqual([missing.status, missing.json.error.code], [404, 'not_found']);
      const info = await request(base, 'GET', '/v1/info');
      assert.equal(info.json.data.sequencer_public_key, sequencerKey);
      const api = await request(base, 'GET', '/openapi.json');
      assert.ok(api.json.paths['/v1/pay'] && api.json.paths['/v1/transfers'], 'the API description is the whole service’s');
      const settled = await request(base, 'POST', '/v1/settle', { headers: { ...fleet, 'x-ledger-agent': payer.token } });
      assert.equal(settled.status, 200, settled.text);
    });

    test('one write limit per address, whichever thread takes the connection', async () => {
      // Without the fleet bearer: limited, and refused by the bearer check once admitted (401), so nothing moves.
      const statuses: number[] = [];
      for (let i = 0; i < writeBurst + 3; i++)
        statuses.push((await request(base, 'POST', '/v1/pay', { body: '{}', headers: { 'content-type': 'application/json' } })).status);
      assert.deepEqual(statuses, [...Array(writeBurst).fill(401), 429, 429, 429]);
      const refused = await request(base, 'POST', '/v1/hold', { body: '{}', headers: { 'content-type': 'application/json' } });
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    });

    test('the event stream replays and goes live through a thread', async () => {
      const payer = await agent('2');
      const stream = await openSse(`${base}/v1/stream`, { 'last-event-id': '0' });
      try {
        assert.equal(stream.status, 200);
        await eventually(() => stream.events.some((event) => event.event === 'transfer'), 'replayed transfers');
        const before = stream.events.length;
        const paid = await request(base, 'POST', '/v1/pay', asAgent(payer.token, { to: generateAgentKey().did, amount: '1' }));
        await eventually(() => stream.events.slice(before).some((event) => event.data.seq === paid.json.data.seq), 'the live transfer');
      } finally {
        stream.close();
      }
      const refused = await request(base, 'GET', '/v1/stream', { headers: { 'last-event-id': 'x' } });
      assert.deepEqual([refused.status, refused.json.error.code], [400, 'invalid_request']);
    });

    test('a second instance on the same port is refused (EADDRINUSE), not let in to share it', { skip: engine === 'postgres' }, async () => {
      const otherDir = await mkdtemp(join(tmpdir(), 'settlement-front-other-'));
      try {
        await assert.rejects(
          startServiceProcess({ PORT: new URL(base).port, HOST: '127.0.0.1', DATA_DIR: otherDir, LOG_LEVEL: 'info', SETTLEMENT_HTTP_THREADS: '2' }),
          /EADDRINUSE/,
        );
      } finally {
        await rm(otherDir, { recursive: true, force: true });
      }
    });

    test('one /metrics for the process: both threads’ requests summed, relayed ones counted once under their own route', async () => {
      const scrape = async () => {
        const answer = await request(base, 'GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } });
        assert.equal(answer.status, 200, answer.text);
        return answer.text;
      };
      assert.equal((await request(base, 'GET', '/metrics', { headers: fleet })).status, 401, 'the fleet bearer is not the metrics bearer');
      const payer = await agent('20');
      const before = await scrape();
      // A connection each: the kernel spreads them over both threads (all 16 on one is a 1 in 30,000 chance).
      const pays = 16;
      const answers = await Promise.all(
        Array.from({ length: pays }, () => request(base, 'POST', '/v1/pay', asAgent(payer.token, { to: generateAgentKey().did, amount: '1' }))),
      );
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      assert.equal((await request(base, 'GET', '/v1/info')).status, 200);
      const after = await scrape();
      const delta = metricDeltas(before, after);
      assert.equal(delta('http_requests_total', { method: 'POST', route: '/v1/pay', status_class: '2xx' }), pays);
      assert.equal(delta('settlement_pays_total', { outcome: 'ok' }), pays);
      assert.equal(delta('http_requests_total', { route: '/v1/info' }), 1, 'relayed, and counted once by the app that answered it');
      assert.doesNotMatch(after, /route="\/\*"/, 'the relay route is not counted');
      assert.equal(after.match(/^# TYPE http_requests_total /gm)?.length, 1, 'one family, not one per thread');
      assertBoundedLabels(after);
    });

    test('SIGTERM stops cleanly with a stream open: the stream ends and the process exits 0', async () => {
      const stream = await openSse(`${base}/v1/stream`);
      assert.equal(stream.status, 200);
      const exit = await service.kill('SIGTERM', 30_000);
      assert.deepEqual(exit, { code: 0, signal: null }, service.output());
      await eventually(() => stream.ended, 'the stream ended');
    });
  });
}

/*
 * A front thread that stops on its own (an uncaught error ends a worker the same way) must not leave the port
 * silently served by fewer threads: another is started in its place, a bounded number of times, and past that the
 * service gives up loudly so its supervisor restarts it. In process, to reach the threads themselves.
 */
describe('a front thread that stops', { skip: process.platform !== 'linux' && 'SO_REUSEPORT front threads are Linux-only' }, () => {
  let s: Settlement;
  let fronts: FrontThreads;
  let base: string;
  const gaveUp: string[] = [];
  before(async () => {
    s = await startSettlement(testEngines()[0] as TestEngine);
    fronts = new FrontThreads({
      count: 2,
      settings: { logLevel: 'silent', transportToken: '', agentAuthSecret, holdMaxSeconds: 86_400, rates: lenientRates, trustProxy: false },
      app: s.app,
      submit: (command) => s.sequencer.submit(command),
      receipt: (seq) => s.reads.receipt(seq),
      take: localBuckets(lenientRates, s.clock),
      hub: s.hub,
      logger: silentLogger,
      maxRestarts: 2,
      onGiveUp: (reason) => void gaveUp.push(reason),
    });
    base = `http://127.0.0.1:${await fronts.listen('127.0.0.1', 0)}`;
  });
  after(async () => {
    await fronts?.close();
    await s?.close();
  });

  test('is replaced on the same port, twice; the third stop gives up and marks the service unhealthy', async () => {
    // A relayed read (the front threads check principal tokens on the system clock; the harness's clock is manual).
    const info = () => request(base, 'GET', '/v1/info');
    for (let round = 1; round <= 2; round++) {
      const [first] = fronts.threads;
      await first?.terminate();
      await pollUntil(() => fronts.threads.length === 2 && !fronts.threads.includes(first as never), `thread replaced (${round})`, {
        timeoutMs: 30_000,
        intervalMs: 20,
      });
      // Every connection (each its own) lands on a live thread and is answered.
      for (const answer of await Promise.all(Array.from({ length: 8 }, info))) assert.equal(answer.status, 200, answer.text);
      assert.equal(fronts.healthy, true);
    }
    await fronts.threads[0]?.terminate();
    await pollUntil(() => gaveUp.length === 1, 'gave up', { timeoutMs: 30_000, intervalMs: 20 });
    assert.equal(fronts.healthy, false);
    assert.match(gaveUp[0] ?? '', /after 2 restarts/);
    assert.equal(fronts.threads.length, 1);
    // The remaining thread still answers while the supervisor restarts the process.
    assert.equal((await info()).status, 200);
  });
});
