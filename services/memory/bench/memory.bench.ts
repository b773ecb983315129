/*
 * The memory server's benchmark, peers side by side in one run:
 *  1. retrieval quality on the project's set (bench/quality): recall@5 and MRR of our recall (keywords alone, and
 *     with embeddings when a real endpoint is configured) against the official MCP memory server's search_nodes;
 *  2. at scale on PostgreSQL: recall and search latency (one call in flight, p50/p99) at BENCH_MEMORIES memories,
 *     remember throughput, against the official server on the same corpus.
 * Not part of `npm test`. Usage: npm run bench -w services/memory
 *   BENCH_DATABASE_URL   admin URL (default postgres://postgres@127.0.0.1:5432/postgres); a temp database is made beside it
 *   BENCH_MEMORIES       corpus size for the scale run (default 100000)
 *   BENCH_CALLS          recall and search calls measured (default 1000)
 *   BENCH_SECONDS        remember throughput window (default 10)
 *   BENCH_EMBEDDINGS_URL, BENCH_EMBEDDINGS_MODEL, BENCH_EMBEDDINGS_DIMENSIONS, BENCH_EMBEDDINGS_API_KEY: a real
 *                        OpenAI-compatible embedding endpoint, to score the hybrid path too (none can be reached here)
 */
import os from 'node:os';
import { openDatabase } from '@platform/kit/db/open-database';
import { benchPreamble } from '@platform/testkit/bench-machine';
import { httpCall } from '@platform/testkit/http-call';
import { closedLoop } from '@platform/testkit/load-loops';
import { createTempDatabase } from '@platform/testkit/temp-database';
import pino from 'pino';
import type { MemorySchema } from '../src/db/schema.ts';
import { bulkLoad } from './bulk-load.ts';
import { startMemoryProcess } from './memory-process.ts';
import { startOfficialServer } from './official-process.ts';
import { rankWithMemoryServer } from './quality/memory-server.ts';
import { rankWithOfficialServer } from './quality/official-server.ts';
import { loadQualitySet, type QualityScore, scoreRankings } from './quality/score.ts';
import { syntheticMemories, syntheticQueries } from './synthetic.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const corpusSize = Number(process.env.BENCH_MEMORIES ?? 100_000);
const calls = Number(process.env.BENCH_CALLS ?? 1_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const officialCalls = 20;
const token = 'bench-memory-token';
const targets = { recallRatio: 2, recallP99Ms: 20, remembersPerSecond: 1_000 };

const _cpus = os.cpus();
await benchPreamble('memory server');

// 1. Quality.
const { memories, queries } = loadQualitySet();
console.log(`\nretrieval quality: ${memories.length} memories, ${queries.length} queries`);
const contenders: [string, QualityScore][] = [
  ['memory server, keywords only', scoreRankings(queries, await rankWithMemoryServer(memories, queries))],
  ['official server-memory search_nodes', scoreRankings(queries, await rankWithOfficialServer(memories, queries))],
];
if (process.env.BENCH_EMBEDDINGS_URL) {
  const env = {
    MEMORY_EMBEDDINGS_URL: process.env.BENCH_EMBEDDINGS_URL,
    MEMORY_EMBEDDINGS_MODEL: process.env.BENCH_EMBEDDINGS_MODEL ?? '',
    MEMORY_EMBEDDINGS_DIMENSIONS: process.env.BENCH_EMBEDDINGS_DIMENSIONS ?? '',
    MEMORY_EMBEDDINGS_API_KEY: process.env.BENCH_EMBEDDINGS_API_KEY ?? '',
  };
  contenders.splice(1, 0, ['memory server, keywords + embeddings', scoreRankings(queries, await rankWithMemoryServer(memories, queries, env))]);
}
const official = contenders.at(-1)?.[1].recallAt5 ?? 0;
const categories = Object.keys(contenders[0]?.[1].byCategory ?? {});
console.log(`| contender | recall@5 | vs official | MRR | stale@5 | ${categories.map((category) => `${category} r@5`).join(' | ')} |`);
console.log(`|---|---:|---:|---:|---:|${categories.map(() => '---:').join('|')}|`);
for (const [name, score] of contenders) {
  const ratio = official > 0 ? `${(score.recallAt5 / official).toFixed(1)}x` : '–';
  const perCategory = categories.map((category) => (score.byCategory[category]?.recallAt5 ?? 0).toFixed(2)).join(' | ');
  console.log(`| ${name} | ${score.recallAt5.toFixed(3)} | ${ratio} | ${score.mrr.toFixed(3)} | ${score.staleAt5.toFixed(2)} | ${perCategory} |`);
}

// 2. Scale.
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};
const timed = async (count: number, run: (index: number) => Promise<void>) => {
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await run(index);
    latencies.push(performance.now() - started);
  }
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
};

console.log(`\nscale: ${corpusSize} memories on PostgreSQL`);
const corpus = syntheticMemories(corpusSize);
const probes = syntheticQueries(calls + 100);
const temp = await createTempDatabase(adminUrl);
const env = { DATABASE_URL: temp.url, MEMORY_MCP_TOKEN: token };
try {
  const first = await startMemoryProcess(env);
  await first.stop();
  const database = await openDatabase<MemorySchema>({ url: temp.url, schema: 'memory', logger: pino({ level: 'silent' }) });
  const loadStarted = performance.now();
  await bulkLoad(database.db, corpus);
  console.log(`loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
  await database.close();
  const server = await startMemoryProcess(env);
  console.log(`server start with ${corpusSize} memories (term statistics loaded): ${server.startupMs.toFixed(0)} ms`);
  const post = async (tool: string, body: unknown) => {
    const answer = await httpCall(server.url, 'POST', `/v1/${tool}`, { bearer: token, body });
    if (answer.status !== 200) throw new Error(`${tool} answered ${answer.status}: ${answer.text}`);
  };
  for (const query of probes.slice(0, 100)) await post('recall', { query });
  const recallLatency = await timed(calls, (index) => post('recall', { query: probes[100 + index] }));
  const searchLatency = await timed(calls, (index) => post('search', { query: probes[100 + index], limit: 20 }));

  let serial = 0;
  const rememberOne = await closedLoop(32, seconds * 1000, async () => {
    serial++;
    const answer = await httpCall(server.url, 'POST', '/v1/remember', {
      bearer: token,
      body: { memories: [{ content: `Bench note ${serial}: the user mentioned item ${serial * 7919} while planning.`, kind: 'note' }] },
    });
    return answer.status === 200 ? { ok: true } : { ok: false, label: String(answer.status) };
  });
  const batchSize = 100;
  const rememberBatch = await closedLoop(8, seconds * 1000, async () => {
    const batch = Array.from({ length: batchSize }, () => {
      serial++;
      return { content: `Batch note ${serial}: a reminder about task ${serial * 104729}.`, kind: 'note' };
    });
    const answer = await httpCall(server.url, 'POST', '/v1/remember', { bearer: token, body: { memories: batch } });
    return answer.status === 200 ? { ok: true } : { ok: false, label: String(answer.status) };
  });
  await server.stop();

  const peer = await startOfficialServer(corpus);
  const officialSearch = await timed(officialCalls, (index) => peer.call('search_nodes', { query: probes[100 + index] }));
  const officialRemember = await timed(officialCalls, (index) =>
    peer.call('create_entities', { entities: [{ name: `bench-${index}`, entityType: 'note', observations: [`Bench note ${index}`] }] }),
  );
  await peer.close();

  const ms = (value: number) => value.toFixed(2);
  const perSecond = (tally: { ok: number; seconds: number }, each = 1) => (tally.ok * each) / tally.seconds;
  const oneRate = perSecond(rememberOne);
  const batchRate = perSecond(rememberBatch, batchSize);
  const officialRate = 1000 / officialRemember.p50;
  console.log(`\n| operation at ${corpusSize} memories | memory server p50 ms | p99 ms | official p50 ms | p99 ms | official / ours (p50) |`);
  console.log('|---|---:|---:|---:|---:|---:|');
  console.log(
    `| recall (keywords) | ${ms(recallLatency.p50)} | ${ms(recallLatency.p99)} | ${ms(officialSearch.p50)} | ${ms(officialSearch.p99)} | ${(officialSearch.p50 / recallLatency.p50).toFixed(0)}x |`,
  );
  console.log(
    `| search (keywords, page of 20) | ${ms(searchLatency.p50)} | ${ms(searchLatency.p99)} | ${ms(officialSearch.p50)} | ${ms(officialSearch.p99)} | ${(officialSearch.p50 / searchLatency.p50).toFixed(0)}x |`,
  );
  console.log(`\n| remember | memories/s | vs official |`);
  console.log('|---|---:|---:|');
  console.log(`| memory server, 1 per call, 32 in flight | ${oneRate.toFixed(0)} | ${(oneRate / officialRate).toFixed(0)}x |`);
  console.log(`| memory server, ${batchSize} per call, 8 in flight | ${batchRate.toFixed(0)} | ${(batchRate / officialRate).toFixed(0)}x |`);
  console.log(`| official create_entities, 1 per call (stdio, one at a time) | ${officialRate.toFixed(1)} | 1.0x |`);
  const errors = [...rememberOne.errors, ...rememberBatch.errors];
  if (errors.length > 0) console.log(`errors: ${JSON.stringify(errors)}`);

  const ours = contenders[0]?.[1].recallAt5 ?? 0;
  console.log('\ntargets:');
  console.log(
    `  recall@5 ≥ ${targets.recallRatio}x official without embeddings: ${official > 0 ? (ours / official).toFixed(1) : '∞'}x ${ours >= targets.recallRatio * official ? 'met' : 'NOT met'}`,
  );
  console.log(
    `  recall p99 < ${targets.recallP99Ms} ms at ${corpusSize}: ${ms(recallLatency.p99)} ms ${recallLatency.p99 < targets.recallP99Ms ? 'met' : 'NOT met'}`,
  );
  console.log(
    `  ≥ ${targets.remembersPerSecond} remembers/s: ${oneRate.toFixed(0)}/s one per call ${oneRate >= targets.remembersPerSecond ? 'met' : 'NOT met'}`,
  );
} finally {
  await temp.drop();
}
