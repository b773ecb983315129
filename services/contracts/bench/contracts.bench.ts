import { benchPreamble } from '@platform/testkit/bench-machine';
import { benchProject } from './bench-project.ts';
import { EnginePeer } from './engine-peer.ts';
import { HardhatPeer } from './hardhat-peer.ts';

/**
 * Compile and test, cold and warm: the engine over HTTP (its own process) beside Hardhat 3's `hardhat build` and
 * `hardhat test solidity` on the same sources, offline, same solc-js. Cold for the engine is a project it has never
 * compiled (its cache is keyed by content, so each cold run changes a comment); cold for Hardhat is a run after
 * removing its artifacts and cache. `npm run bench -w services/contracts`.
 */

const coldRuns = 3;
const warmRuns = 10;
const hardhatWarmRuns = 5;
const expectedTests = 20;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const format = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const variant = (run: number) => ({ ...benchProject, 'src/BenchToken.sol': `${benchProject['src/BenchToken.sol']}// bench run ${run} ${Date.now()}\n` });

async function timesOf(runs: number, once: (run: number) => Promise<number> | number): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) times.push(await once(run));
  return times;
}

function checkTestRun(data: Record<string, unknown>): void {
  const summary = data.summary as { passed: number; failed: number };
  if (summary.passed !== expectedTests || summary.failed !== 0) throw new Error(`unexpected test result ${JSON.stringify(summary)}`);
}

async function main() {
  await benchPreamble('contract engine');
  const hardhat = new HardhatPeer(benchProject);
  console.log(`hardhat project in ${hardhat.dir}${hardhat.offline ? ', run with no network (unshare -n)' : ' (network not isolated: unshare unavailable)'}`);

  // The engine's data folder is initialised once, so "process cold" measures a restart, not PGlite's first initdb.
  const engine = new EnginePeer();
  await engine.start();
  await engine.stop(false);
  const startMs = await engine.start();
  const firstTest = await engine.post('/v1/test', { sources: variant(-1) });
  checkTestRun(firstTest.data);
  const processCold = startMs + firstTest.ms;

  const engineCompileCold: number[] = [];
  const hardhatBuildCold: number[] = [];
  const engineTestCold: number[] = [];
  const hardhatTestCold: number[] = [];
  // Cold runs interleave engine and Hardhat, so background load falls on both alike.
  for (let run = 0; run < coldRuns; run++) {
    const compiled = await engine.post('/v1/compile', { sources: variant(run) });
    if (compiled.data.success !== true) throw new Error('bench project did not compile');
    engineCompileCold.push(compiled.ms);
    hardhat.clean();
    hardhatBuildCold.push(hardhat.run(['build']));
    const tested = await engine.post('/v1/test', { sources: variant(100 + run) });
    checkTestRun(tested.data);
    engineTestCold.push(tested.ms);
    hardhat.clean();
    hardhatTestCold.push(hardhat.run(['test', 'solidity']));
  }
  const warm = variant(1000);
  await engine.post('/v1/test', { sources: warm });
  const engineCompileWarm = await timesOf(warmRuns, async () => (await engine.post('/v1/compile', { sources: warm })).ms);
  const engineTestWarm = await timesOf(warmRuns, async () => {
    const tested = await engine.post('/v1/test', { sources: warm });
    checkTestRun(tested.data);
    return tested.ms;
  });
  const hardhatBuildWarm = await timesOf(hardhatWarmRuns, () => hardhat.run(['build']));
  const hardhatTestWarm = await timesOf(hardhatWarmRuns, () => hardhat.run(['test', 'solidity']));
  await engine.stop();
  hardhat.dispose();

  const rows: Array<[string, number, number]> = [
    ['compile, cold', median(engineCompileCold), median(hardhatBuildCold)],
    ['compile, warm (unchanged project)', median(engineCompileWarm), median(hardhatBuildWarm)],
    ['compile and test, cold', median(engineTestCold), median(hardhatTestCold)],
    ['compile and test, warm', median(engineTestWarm), median(hardhatTestWarm)],
    ['process start + first compile and test', processCold, median(hardhatTestCold)],
  ];
  console.log(`\nmedians (cold: ${coldRuns} runs, warm: engine ${warmRuns}, Hardhat ${hardhatWarmRuns}); engine process started in ${format(startMs)}\n`);
  console.log('| step | engine | Hardhat 3 | engine / Hardhat |');
  console.log('|---|---:|---:|---:|');
  for (const [step, ours, theirs] of rows) console.log(`| ${step} | ${format(ours)} | ${format(theirs)} | ${(ours / theirs).toFixed(3)} |`);
  const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
  console.log(
    `\ntargets: warm compile < 50 ms: ${verdict(median(engineCompileWarm) < 50)}; warm compile-and-test ≤ Hardhat warm: ${verdict(median(engineTestWarm) <= median(hardhatTestWarm))}; cold ≤ Hardhat cold: ${verdict(median(engineTestCold) <= median(hardhatTestCold) && median(engineCompileCold) <= median(hardhatBuildCold))}`,
  );
}

await main();
