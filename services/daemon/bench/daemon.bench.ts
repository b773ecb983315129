import { existsSync } from 'node:fs';
import { benchPreamble } from '@platform/testkit/bench-machine';
import { measureFanOut } from './fan-out.ts';
import { measureAppends } from './journal-appends.ts';
import { startModelProcess } from './model-process.ts';
import { measureRail } from './rail-runs.ts';
import { idleMemoryVerdict, measureStarts } from './start-and-memory.ts';

/*
 * `npm run bench -w services/daemon`: start-to-ready and idle memory of a daemon process, the rail's own overhead per
 * step against a model that answers at once, signed durable journal appends per second, SSE fan-out to 1,000
 * subscribers, and the same two-step intent with a gate beside LangGraph's runtime. Each row puts a peer beside ours
 * in the same run, as a ratio. BENCH_RUNS (default 7 starts, 100 intents), BENCH_SUBSCRIBERS (1000), BENCH_PORT.
 */

const runs = Number(process.env.BENCH_RUNS ?? 7);
const subscribers = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const port = Number(process.env.BENCH_PORT ?? 18_480);
const fixed = (value: number, places = 1) => value.toFixed(places);
const ratio = (ours: number, theirs: number) => `${(ours / theirs).toFixed(2)}x`;

await benchPreamble('daemon');

const starts = await measureStarts({ runs, idleMs: 2_000, port });
console.log('\nStart to ready (GET /healthz answers) and idle memory, median of', runs, 'starts on a fresh data folder:');
console.log('| process | ready ms | max | RSS MB | max | private MB |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, figures] of [
  ['bundle (as the router starts it)', starts.bundle],
  ['sources (`node src/main.ts`)', starts.source],
] as const)
  console.log(
    `| ${name} | ${fixed(figures.readyMs, 0)} | ${fixed(figures.maxReadyMs, 0)} | ${fixed(figures.rssMb)} | ${fixed(figures.maxRssMb)} | ${fixed(figures.privateMb)} |`,
  );
console.log(`bundle/sources: ready ${ratio(starts.bundle.readyMs, starts.source.readyMs)}, RSS ${ratio(starts.bundle.rssMb, starts.source.rssMb)}`);
const idleMemory = idleMemoryVerdict(starts.bundle, runs);
console.log(idleMemory.line);

const model = await startModelProcess();
try {
  const rail = await measureRail(model.info.url, runs * 15);
  const inMemory = existsSync('/dev/shm') ? await measureRail(model.info.url, runs * 15, '/dev/shm') : undefined;
  console.log(
    `\nThe rail in process against a model that answers at once (${runs * 15} intents of five model calls: compile, plan, two steps, answer; 8 durable journal appends):`,
  );
  console.log('| data folder | direct model call p50 ms | intent p50 ms | intent p99 ms | rail overhead per step ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, figures] of [
    ['disk (what runs)', rail],
    ['tmpfs (the rail without the disk’s fsyncs)', inMemory],
  ] as const)
    if (figures)
      console.log(
        `| ${name} | ${fixed(figures.directCallMs.p50, 2)} | ${fixed(figures.intentMs.p50, 2)} | ${fixed(figures.intentMs.p99, 2)} | ${fixed(figures.overheadPerStepMs, 2)} |`,
      );
  console.log('\nThe same two-step intent with an approval gate, end to end (p50 ms):');
  console.log('| runtime | ms | vs LangGraph |');
  console.log('|---|---:|---:|');
  console.log(`| daemon rail (signed journal, 10 durable appends) | ${fixed(rail.gated.oursMs, 2)} | ${ratio(rail.gated.oursMs, rail.gated.langGraphMs)} |`);
  console.log(`| LangGraph JS 1.7 (durable file checkpoints) | ${fixed(rail.gated.langGraphMs, 2)} | 1.00x |`);

  const appends = await measureAppends(2_000);
  console.log('\nJournal appends (signed, hash-chained, durable before they resolve):');
  console.log('| measure | appends/s | p50 ms | p99 ms | vs plain durable write |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(
    `| one intent, one after another | ${fixed(appends.perSecond, 0)} | ${fixed(appends.p50Ms, 2)} | ${fixed(appends.p99Ms, 2)} | ${ratio(appends.perSecond, appends.floorPerSecond)} |`,
  );
  console.log(`| eight intents at once | ${fixed(appends.parallelPerSecond, 0)} | | | |`);
  console.log(`| plain durable write of the same bytes | ${fixed(appends.floorPerSecond, 0)} | | | 1.00x |`);

  const fanOut = await measureFanOut(model.info.url, { subscribers, turns: 50, port: port + 1 });
  console.log(`\nSSE fan-out to ${subscribers} subscribers (another process), ms from an event's time to its last subscriber:`);
  console.log('| server | events | p50 | p99 | first→last p50 | vs floor p50 |');
  console.log('|---|---:|---:|---:|---:|---:|');
  console.log(
    `| daemon /events | ${fanOut.daemon.events} | ${fixed(fanOut.daemon.toLastP50)} | ${fixed(fanOut.daemon.toLastP99)} | ${fixed(fanOut.daemon.spreadP50)} | ${ratio(fanOut.daemon.toLastP50, fanOut.floor.toLastP50)} |`,
  );
  console.log(
    `| plain broadcaster (floor) | ${fanOut.floor.events} | ${fixed(fanOut.floor.toLastP50)} | ${fixed(fanOut.floor.toLastP99)} | ${fixed(fanOut.floor.spreadP50)} | 1.00x |`,
  );
} finally {
  model.kill();
}
// Over the bound the run fails, its reason the last line printed.
if (!idleMemory.ok) console.error(`\n${idleMemory.line}`);
process.exit(idleMemory.ok ? 0 : 1);
