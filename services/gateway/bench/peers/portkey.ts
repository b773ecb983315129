import { cpuBetween, cpuSnapshot } from '@platform/testkit/cpu';
import { type PortkeyGateway, portkeyUpstreamHeaders, startPortkeyGateway } from '@platform/testkit/portkey-gateway';
import type { CallRun, LoadProcess, StreamRun, Target } from '../load-process.ts';

/*
 * Portkey's open-source gateway (1.15.2) as the peer of the platform gateway, in the same run: pointed at the same
 * local upstream, called by the same load generator with the same bodies, through the same phases as the gateway's
 * PostgreSQL run (one call at a time, the fixed rate with its unmeasured warm-up second, closed-loop capacity at each
 * count in flight, streams in bursts and paced). Each phase calls the upstream directly right before Portkey, so
 * what Portkey adds is measured against a direct call of the same minute, as the gateway's rows are. Portkey meters
 * nothing and writes no ledger; the gateway debits one on every call, so the comparison prints both as they run.
 */

export interface PeerPhases {
  /** The peer's name and version, as the tables print it. */
  name: string;
  serial: { direct: CallRun; peer: CallRun };
  fixed: { direct: CallRun; peer: CallRun };
  /** Closed loop at each count in flight, with the peer process's CPU time per call (µs, from /proc). */
  max: Array<{ concurrency: number; run: CallRun; microsPerCall: number }>;
  directMax: CallRun;
  streams: { direct: StreamRun; peer: StreamRun; paced: { direct: StreamRun; peer: StreamRun } };
}

export interface PeerSettings {
  upstreamUrl: string;
  upstreamApiKey: string;
  body: string;
  streamBody: string;
  fixedRate: number;
  concurrencies: number[];
  runSeconds: number;
  streams: { count: number; concurrency: number; startEveryMs: number };
}

/** Starts Portkey, runs every phase against it and the upstream directly, and stops it. */
export async function benchPortkey(gen: LoadProcess, settings: PeerSettings): Promise<PeerPhases> {
  const portkey = await startPortkeyGateway();
  try {
    const peerHeaders = { 'content-type': 'application/json', ...portkeyUpstreamHeaders(settings.upstreamUrl, settings.upstreamApiKey) };
    await gen.ask('setup', {
      direct: { url: settings.upstreamUrl, headers: [{ 'content-type': 'application/json', authorization: `Bearer ${settings.upstreamApiKey}` }] },
      portkey: { url: `${portkey.url}/v1`, headers: [peerHeaders] },
      maxSockets: Math.max(...settings.concurrencies, 64),
    });
    console.log(`\nPortkey ${portkey.version} on Node ${process.version}: ${portkey.url} (pid ${portkey.pid}), the same upstream and load generator`);
    return await phases(gen, portkey, settings);
  } finally {
    await portkey.stop();
  }
}

async function phases(gen: LoadProcess, portkey: PortkeyGateway, settings: PeerSettings): Promise<PeerPhases> {
  const { body, streamBody, fixedRate, runSeconds } = settings;
  for (const target of ['direct', 'portkey'] as Target[]) await gen.ask('closedLoop', { target, body, concurrency: 32, durationMs: 2_000 });
  const oneAtATime = (target: Target) => gen.ask('closedLoop', { target, body, concurrency: 1, durationMs: 3_000 });
  const serial = { direct: await oneAtATime('direct'), peer: await oneAtATime('portkey') };
  const warmUp = (target: Target) => gen.ask('openLoop', { target, body, rate: fixedRate, durationMs: 1_000 });
  const fixedRun = async (target: Target) => {
    await warmUp(target);
    return gen.ask('openLoop', { target, body, rate: fixedRate, durationMs: runSeconds * 1000 });
  };
  const fixed = { direct: await fixedRun('direct'), peer: await fixedRun('portkey') };
  const max: PeerPhases['max'] = [];
  for (const concurrency of settings.concurrencies) {
    const from = cpuSnapshot([portkey.pid]);
    const run = await gen.ask('closedLoop', { target: 'portkey', body, concurrency, durationMs: runSeconds * 1000 });
    const to = cpuSnapshot([portkey.pid]);
    const calls = run.ok + Object.values(run.errors).reduce((sum, n) => sum + n, 0);
    const cpuSeconds = cpuBetween(from, to).named(portkey.pid) * (((to?.at ?? 0) - (from?.at ?? 0)) / 1000);
    max.push({ concurrency, run, microsPerCall: calls > 0 ? (cpuSeconds * 1e6) / calls : Number.NaN });
    console.log(
      `  ${concurrency} in flight: ${Math.round(run.perSecond)} calls/s through Portkey, p50 ${run.latencies.p50.toFixed(2)} ms, p99 ${run.latencies.p99.toFixed(2)} ms`,
    );
  }
  const best = max.reduce((a, b) => (b.run.perSecond > a.run.perSecond ? b : a));
  const directMax = await gen.ask('closedLoop', { target: 'direct', body, concurrency: best.concurrency, durationMs: runSeconds * 1000 });
  const { count, concurrency, startEveryMs } = settings.streams;
  const streamRun = async (target: Target, every?: number) => {
    await warmUp(target);
    return gen.ask('streams', { target, body: streamBody, count, concurrency, ...(every ? { startEveryMs: every } : {}) });
  };
  const streams = {
    direct: await streamRun('direct'),
    peer: await streamRun('portkey'),
    paced: { direct: await streamRun('direct', startEveryMs), peer: await streamRun('portkey', startEveryMs) },
  };
  return { name: `Portkey ${portkey.version}`, serial, fixed, max, directMax, streams };
}
