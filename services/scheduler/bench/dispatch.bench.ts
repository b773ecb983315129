/*
 * The scheduler's dispatch benchmark: N alarms due at once, and 1,000 spread over 10 s, fired to a
 * local wake sink; our scheduler on PGlite and on PostgreSQL beside pg-boss and graphile-worker doing
 * the same work on the same PostgreSQL in the same run. Not part of `npm test`.
 * Usage: npm run bench -w services/scheduler   (BENCH_DATABASE_URL: an admin URL; BENCH_BURST: N, default 10000)
 */
import { benchPreamble } from '@platform/testkit/bench-machine';
import { createTempDatabase } from '@platform/testkit/temp-database';
import { runGraphileWorker } from './peers/graphile-worker.ts';
import { runPgBoss } from './peers/pg-boss.ts';
import type { PeerOptions, PeerResult } from './peers/types.ts';
import { runScheduler } from './scheduler.ts';
import { closeWakeClient, warmWakeClient } from './wake-client.ts';
import { startWakeSinkProcess } from './wake-sink-process.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const burst = Number(process.env.BENCH_BURST ?? 10_000);
const token = 'bench-token';
const shapes = [
  { title: `${burst} due at once`, count: burst, spreadMs: 0 },
  { title: '1000 spread over 10 s', count: 1000, spreadMs: 10_000 },
];

type Contender = { name: string; run: (opts: PeerOptions) => Promise<PeerResult>; pglite?: boolean };
const contenders: Contender[] = [
  { name: 'scheduler (PGlite)', run: (opts) => runScheduler({ ...opts, databaseUrl: undefined }), pglite: true },
  { name: 'scheduler (PostgreSQL)', run: (opts) => runScheduler(opts) },
  { name: 'pg-boss', run: runPgBoss },
  { name: 'graphile-worker', run: runGraphileWorker },
];

// BENCH_ONLY=scheduler runs our contenders alone (quick iterations); the README table comes from a full run.
const only = process.env.BENCH_ONLY;
const selected = contenders.filter((contender) => !only || contender.name.startsWith(only));

await benchPreamble('scheduler dispatch');
const sink = await startWakeSinkProcess({ token });
await warmWakeClient(sink.url, token);
sink.reset();
try {
  for (const shape of shapes) {
    const results: PeerResult[] = [];
    for (const contender of selected) {
      const db = contender.pglite ? undefined : await createTempDatabase(adminUrl);
      try {
        const result = await contender.run({
          databaseUrl: db?.url ?? '',
          count: shape.count,
          spreadMs: shape.spreadMs,
          sinkUrl: sink.url,
          sinkToken: token,
          sink,
        });
        results.push({ ...result, name: contender.name });
        if (sink.duplicates() > 0) console.log(`  note: ${contender.name} delivered ${sink.duplicates()} duplicates`);
      } finally {
        await db?.drop();
      }
    }
    printTable(shape.title, results);
  }
} finally {
  closeWakeClient();
  await sink.close();
}

function printTable(title: string, results: PeerResult[]): void {
  const ours = results.find((result) => result.name === 'scheduler (PostgreSQL)') ?? (results[0] as PeerResult);
  console.log(`\n${title}`);
  console.log('| contender | fires/s | lateness p50 ms | p99 ms | max ms | fires/s vs ours | p99 vs ours |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${Math.round(r.firesPerSecond)} | ${Math.round(r.p50)} | ${Math.round(r.p99)} | ${Math.round(r.max)} | ` +
        `${(r.firesPerSecond / ours.firesPerSecond).toFixed(2)}x | ${(r.p99 / Math.max(ours.p99, 1)).toFixed(2)}x |`,
    );
  }
}
