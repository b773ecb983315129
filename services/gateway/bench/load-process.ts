import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { type Child, forkChild, serveChild } from '@platform/testkit/child-process';
import { LeanHttpClient } from '@platform/testkit/lean-http-client';
import { closedLoop, type Outcome, openLoop } from '@platform/testkit/load-loops';
import { percentile } from '@platform/testkit/stats';

/*
 * The load generator, in its own process, and the one client for both targets: the upstream called directly and
 * the gateway in front of it, with the same bodies, the same node:http keep-alive agent settings and the same
 * measurement. (node:http rather than fetch: see ARCHITECTURE.md, wake delivery.)
 */

/** The upstream called directly, the platform gateway in front of it, and a peer gateway (bench/peers/). */
export type Target = 'direct' | 'gateway' | 'portkey';

export interface TargetSetup {
  url: string;
  headers: Array<Record<string, string>>;
}

export interface CallRun {
  ok: number;
  errors: Record<string, number>;
  seconds: number;
  perSecond: number;
  /** Milliseconds, from each call's due time (open loop) or send time (closed loop) to its last byte. */
  latencies: { p50: number; p99: number; max: number };
  loadCpuCores: number;
}

export interface StreamRun {
  streams: number;
  errors: number;
  /** Milliseconds from sending the request to the first content byte. */
  ttfb: { p50: number; p99: number };
  /** Milliseconds from the upstream writing a chunk (its `sent_at`) to this process reading it, all chunks but the first. */
  chunkDelay: { p50: number; p99: number; max: number };
}

const epochMs = () => performance.timeOrigin + performance.now();
const targets = new Map<Target, { base: URL; headers: Array<Record<string, string>>; leanHeaders: Array<Record<string, string>>; lean: LeanHttpClient }>();
let agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 30_000 });
let turn = 0;

function summary(values: number[]) {
  const sorted = values.sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

interface Answer {
  status: number;
  firstByteAt: number;
  error?: string;
}

/** POSTs a body to the target; `onData` sees each chunk of the answer as it arrives. */
function post(target: Target, body: string, onData?: (chunk: Buffer) => void): Promise<Answer> {
  const setup = targets.get(target);
  if (!setup) throw new Error(`target ${target} not configured`);
  const headers = setup.headers[turn++ % setup.headers.length] as Record<string, string>;
  return new Promise<Answer>((resolve) => {
    const request = http.request(
      {
        hostname: setup.base.hostname,
        port: setup.base.port,
        path: `${setup.base.pathname}/chat/completions`,
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let firstByteAt = 0;
        response.on('data', (chunk: Buffer) => {
          if (firstByteAt === 0) firstByteAt = performance.now();
          onData?.(chunk);
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, firstByteAt }));
        response.on('error', (error) => resolve({ status: 0, firstByteAt, error: error.message }));
      },
    );
    request.setTimeout(30_000, () => request.destroy(new Error('timeout')));
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, firstByteAt: 0, error: error.code ?? error.message }));
    request.end(body);
  });
}

/**
 * A whole (non-streaming) call through the testkit's lean client: node:http's client costs the load process about
 * three times the CPU per request, taken on this 2-core machine from the processes being measured. Streams keep
 * node:http (`post`), which reads chunked answers as they arrive.
 */
async function callOutcome(target: Target, body: string): Promise<Outcome> {
  const setup = targets.get(target);
  if (!setup) throw new Error(`target ${target} not configured`);
  const headers = setup.leanHeaders[turn++ % setup.leanHeaders.length] as Record<string, string>;
  try {
    const answer = await setup.lean.post(`${setup.base.pathname}/chat/completions`, body, headers);
    return answer.status === 200 ? { ok: true } : { ok: false, label: `${answer.status}` };
  } catch (error) {
    return { ok: false, label: `0 ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}

function result(ok: number, errors: Map<string, number>, latencies: number[], seconds: number, cpu: NodeJS.CpuUsage, wallMs: number): CallRun {
  return {
    ok,
    errors: Object.fromEntries(errors),
    seconds,
    perSecond: ok / seconds,
    latencies: summary(latencies),
    loadCpuCores: (cpu.user + cpu.system) / 1000 / wallMs,
  };
}

const handlers = {
  /** The targets of the next runs (a run of the gateway sets up the gateway, a peer's run the peer). */
  setup(args: { direct: TargetSetup; gateway?: TargetSetup; portkey?: TargetSetup; maxSockets: number }): void {
    agent.destroy();
    agent = new http.Agent({ keepAlive: true, maxSockets: args.maxSockets, keepAliveMsecs: 30_000 });
    for (const target of targets.values()) target.lean.close();
    targets.clear();
    for (const [target, setup] of [
      ['direct', args.direct],
      ['gateway', args.gateway],
      ['portkey', args.portkey],
    ] as const) {
      if (!setup) continue;
      const base = new URL(setup.url);
      // The lean client writes its own content-type.
      const leanHeaders = setup.headers.map(({ 'content-type': _, ...rest }) => rest);
      targets.set(target, { base, headers: setup.headers, leanHeaders, lean: new LeanHttpClient(base, { maxSockets: args.maxSockets }) });
    }
  },

  /** Open loop at a fixed rate, latency from each call's due time (testkit openLoop). */
  async openLoop(args: { target: Target; body: string; rate: number; durationMs: number }): Promise<CallRun> {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const run = await openLoop(args.rate, args.durationMs, () => callOutcome(args.target, args.body));
    return result(run.ok, run.errors, run.latencies, run.seconds, process.cpuUsage(cpu0), performance.now() - t0);
  },

  /** Closed loop: `concurrency` callers each keep one call in flight for `durationMs` (testkit closedLoop). */
  async closedLoop(args: { target: Target; body: string; concurrency: number; durationMs: number }): Promise<CallRun> {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const run = await closedLoop(args.concurrency, args.durationMs, () => callOutcome(args.target, args.body));
    return result(run.ok, run.errors, run.latencies, run.seconds, process.cpuUsage(cpu0), performance.now() - t0);
  },

  /**
   * `count` streams: time to first byte, and how late each later chunk arrives. `concurrency` lanes each start their
   * next stream when the last ends (bursts: streams of one length stay in step, so they start together), or, with
   * `startEveryMs`, one stream starts every so often whatever is open (as independent users' streams arrive).
   */
  async streams(args: { target: Target; body: string; count: number; concurrency: number; startEveryMs?: number }): Promise<StreamRun> {
    const ttfbs: number[] = [];
    const delays: number[] = [];
    let errors = 0;
    let next = 0;
    const one = async (): Promise<void> => {
      let pending = '';
      let seen = 0;
      const sent = performance.now();
      const answer = await post(args.target, args.body, (chunk) => {
        const arrived = epochMs();
        pending += chunk.toString('utf8');
        let end = pending.indexOf('\n\n');
        while (end !== -1) {
          const stamp = /"sent_at":([0-9.]+)/.exec(pending.slice(0, end));
          // The first chunk left with the headers; its delay is the time to first byte, measured apart.
          if (stamp && seen++ > 0) delays.push(arrived - Number(stamp[1]));
          pending = pending.slice(end + 2);
          end = pending.indexOf('\n\n');
        }
      });
      if (answer.status === 200) ttfbs.push(answer.firstByteAt - sent);
      else errors++;
    };
    const lane = async (): Promise<void> => {
      while (next < args.count) {
        next++;
        await one();
      }
    };
    const every = args.startEveryMs;
    if (every === undefined) await Promise.all(Array.from({ length: args.concurrency }, lane));
    // Paced: the testkit's open loop starts one every `every` ms; its own tally is not used (the errors and times are these).
    else await openLoop(1000 / every, args.count * every, () => one().then(() => ({ ok: true }) as const));
    const ttfb = summary(ttfbs);
    return { streams: ttfbs.length, errors, ttfb: { p50: ttfb.p50, p99: ttfb.p99 }, chunkDelay: summary(delays) };
  },

  close: () => {
    agent.destroy();
    for (const target of targets.values()) target.lean.close();
    setImmediate(() => process.exit(0));
  },
};

export type LoadProcess = Child<typeof handlers, { pid: number }>;

export function startLoadProcess(): Promise<LoadProcess> {
  return forkChild(fileURLToPath(import.meta.url), null);
}

if (import.meta.main) serveChild(handlers, { pid: process.pid });
