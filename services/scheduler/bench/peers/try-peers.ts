/*
 * Smoke run of the peer half of the benchmark: each peer, each shape, on its own fresh database.
 * Usage: node bench/peers/try-peers.ts [admin-url]  (default postgres://postgres@127.0.0.1:5432/postgres)
 */
import { createTempDatabase } from '@platform/testkit/temp-database';
import { closeWakeClient, warmWakeClient } from '../wake-client.ts';
import { startWakeSink } from '../wake-sink.ts';
import { runGraphileWorker } from './graphile-worker.ts';
import { runPgBoss } from './pg-boss.ts';
import type { PeerOptions, PeerResult } from './types.ts';

const adminUrl = process.argv[2] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const token = 'bench-token';
const shapes = [
  { count: 2000, spreadMs: 0 },
  { count: 1000, spreadMs: 10_000 },
];
const peers: Array<(opts: PeerOptions) => Promise<PeerResult>> = [runPgBoss, runGraphileWorker];

const fmt = (n: number, digits = 0): string => n.toFixed(digits).padStart(8);

const sink = await startWakeSink({ token });
await warmWakeClient(sink.url, token);
sink.reset();
console.log('peer              count  spread    fires/s   p50 ms   p99 ms   max ms  dupes');
try {
  for (const peer of peers) {
    for (const { count, spreadMs } of shapes) {
      const db = await createTempDatabase(adminUrl);
      try {
        const r = await peer({ databaseUrl: db.url, count, spreadMs, sinkUrl: sink.url, sinkToken: token, sink });
        console.log(
          `${r.name.padEnd(16)} ${String(r.count).padStart(6)} ${String(spreadMs).padStart(7)} ` +
            `${fmt(r.firesPerSecond)} ${fmt(r.p50)} ${fmt(r.p99)} ${fmt(r.max)} ${String(sink.duplicates()).padStart(6)}`,
        );
      } finally {
        await db.drop();
      }
    }
  }
} finally {
  await sink.close();
  closeWakeClient();
}
