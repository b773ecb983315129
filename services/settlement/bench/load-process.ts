import { type KeyObject, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { generateAgentKey } from '@platform/client/agent-key';
import { privateKeyFromSeed } from '@platform/kit/auth/ed25519';
import { GroupCommit } from '@platform/kit/group-commit';
import { encodeIntent, newIntentNonce, signIntent } from '@platform/kit/settlement-intent';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';
import { type LeanAnswer, LeanHttpClient } from '@platform/testkit/lean-http-client';
import { closedLoop, type Outcome, openLoop } from '@platform/testkit/load-loops';
import { max, percentile } from '@platform/testkit/stats';

/*
 * The load generator, in a process of its own so its JSON and socket work is not billed to the service's
 * event loop. Keep-alive HTTP/1.1 through the testkit's lean client rather than node:http or fetch: on a 2-core
 * machine every microsecond the generator spends per pay is taken from the service and PostgreSQL
 * (node:http measured about three times the lean client's CPU per pay; fetch about three times node:http's).
 * It reports its own CPU time per run so the table can show it was not the limit.
 */

interface Payer {
  did: string;
  token: string;
  /** Signs the hold rail's intents. */
  privateKey: KeyObject;
}

/** One run's outcome; latencies in ms, cpu in cores (CPU seconds per wall second) of this process. */
export interface RunResult {
  ok: number;
  /** Non-200 answers and socket failures, by `status code` (e.g. `503 unavailable`). */
  errors: Record<string, number>;
  seconds: number;
  paysPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  loadCpuCores: number;
  /** Open loop only: how late sends left against their schedule (the generator's own lag), p99 in ms. */
  sendLagP99?: number;
}

const requestTimeoutMs = 30_000;
/** Payees that capture on the hold rail (each a principal token). */
const capturingPayees = 16;
const runId = randomBytes(4).toString('hex');
let client: LeanHttpClient | undefined;
const payers: Payer[] = [];
const payees: string[] = [];
/** Payees with a principal token, for the hold rail's captures. */
const payeeAgents: Payer[] = [];
let sequence = 0;

type Answer = LeanAnswer;

function post(path: string, payload: object, token: string | undefined, wantBody: boolean): Promise<Answer> {
  if (!client) return Promise.reject(new Error('prepare first'));
  return client.post(path, JSON.stringify(payload), token ? { 'x-ledger-agent': token } : {}, wantBody).catch((error: NodeJS.ErrnoException) => ({
    status: 0,
    body: error.code ?? error.message,
  }));
}

async function payOutcome(): Promise<Outcome> {
  const answer = await pay();
  return answer.status === 200 ? { ok: true } : { ok: false, label: errorLabel(answer) };
}

function errorLabel(answer: Answer): string {
  if (answer.status === 0) return `socket ${answer.body}`;
  try {
    return `${answer.status} ${(JSON.parse(answer.body ?? '') as { error?: { code?: string } }).error?.code ?? ''}`.trim();
  } catch {
    return `${answer.status}`;
  }
}

async function call<T>(path: string, payload: object, token?: string): Promise<T> {
  const answer = await post(path, payload, token, true);
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.body}`);
  return (JSON.parse(answer.body ?? '') as { data: T }).data;
}

/** One pay from a payer (round robin) to a payee (random), under a key no other pay uses. */
function pay(): Promise<Answer> {
  const n = sequence++;
  const payer = payers[n % payers.length] as Payer;
  const to = payees[Math.floor(Math.random() * payees.length)] as string;
  return post('/v1/pay', { to, amount: '0.01', idempotency_key: `bench-${runId}-${n}` }, payer.token, false);
}

/**
 * The marketplace's hold rail as settlement sees it: the payer's signed hold intent (as a caller signs it for the
 * marketplace, which forwards it), then the payee captures half, the rest returning to the payer: two writes per call.
 */
async function holdCaptureOutcome(): Promise<Outcome> {
  const n = sequence++;
  const payee = payeeAgents[n % payeeAgents.length] as Payer;
  const held = await post('/v1/hold', holdBody(n, payee), undefined, true);
  if (held.status !== 200) return { ok: false, label: `hold ${errorLabel(held)}` };
  const holdId = (JSON.parse(held.body ?? '') as { data: { hold: { id: string } } }).data.hold.id;
  const captured = await post(`/v1/hold/${holdId}/capture`, captureBody(n), payee.token, false);
  return captured.status === 200 ? { ok: true } : { ok: false, label: `capture ${errorLabel(captured)}` };
}

type BatchResult = { ok: true; data: { hold: { id: string } } } | { ok: false; status: number; error: { code: string } };

/** One batch request's items' results (or, when the request itself failed, its error for every item). */
async function batchResults(path: string, items: object[], token: string | undefined): Promise<BatchResult[]> {
  const answer = await post(path, { items }, token, true);
  if (answer.status !== 200) return items.map(() => ({ ok: false, status: answer.status, error: { code: errorLabel(answer) } }));
  return (JSON.parse(answer.body ?? '') as { data: { results: BatchResult[] } }).data.results;
}

const batching = { maxBatch: 64, maxInFlight: Number.POSITIVE_INFINITY };
const holdBatches = new GroupCommit((items: object[]) => batchResults('/v1/hold/batch', items, undefined), batching);
/** Captures go as their payee (the principal of a settle batch): one group commit per payee. */
const captureBatches = new Map<string, GroupCommit<object, BatchResult>>();

/**
 * The same hold rail as the marketplace now sends it: the holds, and the captures, of one turn of the event loop in
 * one batch request each (`POST /v1/hold/batch`, `/v1/hold/batch/settle`), through the kit's group commit.
 */
async function holdCaptureBatchedOutcome(): Promise<Outcome> {
  const n = sequence++;
  const payee = payeeAgents[n % payeeAgents.length] as Payer;
  const held = await holdBatches.submit(holdBody(n, payee));
  if (!held.ok) return { ok: false, label: `hold ${held.status} ${held.error.code}` };
  let captures = captureBatches.get(payee.token);
  if (!captures) {
    const token = payee.token;
    captures = new GroupCommit((items: object[]) => batchResults('/v1/hold/batch/settle', items, token), batching);
    captureBatches.set(token, captures);
  }
  const captured = await captures.submit({ hold_id: held.data.hold.id, action: 'capture', ...captureBody(n) });
  return captured.ok ? { ok: true } : { ok: false, label: `capture ${captured.status} ${captured.error.code}` };
}

/** A hold rail call's hold: the payer's signed intent alone, as a caller signs it for the marketplace. */
function holdBody(n: number, payee: Payer): object {
  const payer = payers[n % payers.length] as Payer;
  const intent = encodeIntent(
    signIntent(
      {
        version: 1,
        from: payer.did,
        to: payee.did,
        amount: '0.01',
        ref: '',
        nonce: newIntentNonce(),
        expiry: new Date(Date.now() + 120_000).toISOString(),
        purpose: 'hold',
      },
      payer.privateKey,
    ),
  );
  return { intent, expires_in_seconds: 60, idempotency_key: `hold-${runId}-${n}` };
}

/** Half the hold, the rest returning to the payer. */
function captureBody(n: number): { amount: string; idempotency_key: string } {
  return { amount: '0.005', idempotency_key: `capture-${runId}-${n}` };
}

/** A new agent with a principal token: the DID handshake. */
async function handshake(): Promise<Payer> {
  const key = generateAgentKey();
  const challenge = await call<{ nonce: string; message: string }>('/v1/agent/auth/challenge', { did: key.did });
  const { token } = await call<{ token: string }>('/v1/agent/auth/verify', {
    did: key.did,
    public_key: key.publicKeyHex,
    nonce: challenge.nonce,
    signature: key.sign(challenge.message),
  });
  return { did: key.did, token, privateKey: privateKeyFromSeed(key.seedHex) };
}

function summarise(ok: number, errors: Map<string, number>, latencies: number[], seconds: number, cpu: NodeJS.CpuUsage, wallMs: number): RunResult {
  const sorted = latencies.sort((a, b) => a - b);
  return {
    ok,
    errors: Object.fromEntries(errors),
    seconds,
    paysPerSecond: ok / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: max(sorted),
    loadCpuCores: (cpu.user + cpu.system) / 1000 / wallMs,
  };
}

/** What a bench caller sends: pays, or the marketplace's hold rail one request at a time or in batches. */
export type Rail = 'pay' | 'holdCapture' | 'holdCaptureBatched';
const rails: Record<Rail, () => Promise<Outcome>> = { pay: payOutcome, holdCapture: holdCaptureOutcome, holdCaptureBatched: holdCaptureBatchedOutcome };

const handlers = {
  /** Handshakes `payerCount` agents and funds each through the dev faucet; payees are keys only (credited on first pay), but for a few with tokens for captures. */
  async prepare(args: { url: string; payerCount: number; payeeCount: number; maxSockets: number }): Promise<{ seconds: number }> {
    const started = performance.now();
    client?.close();
    client = new LeanHttpClient(new URL(args.url), { maxSockets: args.maxSockets, timeoutMs: requestTimeoutMs });
    payers.length = 0;
    payees.length = 0;
    payeeAgents.length = 0;
    for (let i = 0; i < args.payeeCount; i++) payees.push(generateAgentKey().did);
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < args.payerCount) {
        next++;
        const payer = await handshake();
        await call('/v1/dev/faucet', { amount: '1000000' }, payer.token);
        payers.push(payer);
      }
    };
    await Promise.all(Array.from({ length: 16 }, lane));
    for (let i = 0; i < capturingPayees; i++) payeeAgents.push(await handshake());
    return { seconds: (performance.now() - started) / 1000 };
  },

  /** Closed loop: `concurrency` callers each keep one pay (or hold rail call) in flight for `durationMs` (testkit closedLoop). */
  async closedLoop(args: { concurrency: number; durationMs: number; rail?: Rail }): Promise<RunResult> {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const run = await closedLoop(args.concurrency, args.durationMs, rails[args.rail ?? 'pay']);
    return summarise(run.ok, run.errors, run.latencies, run.seconds, process.cpuUsage(cpu0), performance.now() - t0);
  },

  /** Open loop at a fixed rate, latency from each pay's due time (testkit openLoop). */
  async openLoop(args: { rate: number; durationMs: number }): Promise<RunResult> {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const run = await openLoop(args.rate, args.durationMs, payOutcome);
    const result = summarise(run.ok, run.errors, run.latencies, run.seconds, process.cpuUsage(cpu0), performance.now() - t0);
    return {
      ...result,
      sendLagP99: percentile(
        run.sendLags.sort((x, y) => x - y),
        99,
      ),
    };
  },

  close: () => {
    client?.close();
    setImmediate(() => process.exit(0));
  },
};

export type LoadProcess = Child<typeof handlers, { pid: number }>;

export function startLoadProcess(): Promise<LoadProcess> {
  return forkChild(fileURLToPath(import.meta.url), null);
}

if (import.meta.main) serveChild(handlers, { pid: process.pid });
