import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@platform/kit/clock';
import { silentLogger } from '@platform/testkit/databases';
import { p50, p99 } from '@platform/testkit/stats';
import { composeDaemon } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { modelCaller, railBody } from './model-calls.ts';
import { langGraphIntent } from './peers/langgraph-intent.ts';

/*
 * The rail measured in this process against the instant model server in another: intents end to end (five model
 * calls each: compile, plan, two steps, answer), the same number of direct model calls for the model's own time, and
 * the gated intent beside LangGraph's runtime doing the same work with durable checkpoints.
 */

export interface RailFigures {
  intentMs: { p50: number; p99: number };
  directCallMs: { p50: number; p99: number };
  /** Rail time per step beyond the model's: (intent − 5 direct calls) / 5. */
  overheadPerStepMs: number;
  gated: { oursMs: number; langGraphMs: number };
}

const summary = (values: number[]) => ({ p50: p50(values), p99: p99(values) });

/** `parent`: where the data folder goes: the disk (the default), or a tmpfs such as /dev/shm to leave the disk's fsyncs out. */
export async function measureRail(modelUrl: string, runs: number, parent = tmpdir()): Promise<RailFigures> {
  const folder = mkdtempSync(join(parent, 'daemon-rail-'));
  const config = loadConfig({
    DATA_DIR: join(folder, 'daemon'),
    PLATFORM_GATEWAY_URL: modelUrl,
    DAEMON_AGENT_KEY: 'be'.repeat(32),
    DAEMON_USER_ID: 'bench-user',
  });
  const daemon = await composeDaemon(config, { clock: systemClock, logger: silentLogger, requestShutdown: () => {} });
  const model = modelCaller(modelUrl);
  try {
    const intent = async (prose: string): Promise<number> => {
      const started = performance.now();
      const state = await daemon.runner.submit(prose, { via: 'async' }, 'enqueue');
      const ended = await daemon.runner.waitForEnd(state.id);
      if (ended?.status !== 'completed') throw new Error(`intent ${state.id} ended ${ended?.status}: ${ended?.result?.error}`);
      return performance.now() - started;
    };
    const gated = async (prose: string): Promise<number> => {
      const started = performance.now();
      const state = await daemon.runner.submit(prose, { via: 'async' }, 'enqueue');
      // Approve as soon as the gate is invoked, as LangGraph's run resumes as soon as it is interrupted.
      while (!daemon.book.state(state.id)?.gates.some((gate) => gate.status === 'pending')) await new Promise((resolve) => setImmediate(resolve));
      const decision = await daemon.gates.answer(state.id, 'approve', { approved: true, answer: 'yes', by: 'user' });
      if (!decision.recorded) throw new Error('gate not recorded');
      const ended = await daemon.runner.waitForEnd(state.id);
      if (ended?.status !== 'completed') throw new Error(`gated intent ended ${ended?.status}`);
      return performance.now() - started;
    };
    const direct = async (): Promise<number> => {
      const started = performance.now();
      await model.call(railBody('compiled_intent', 'write a short note'));
      return performance.now() - started;
    };
    const peer = langGraphIntent(model.call, join(folder, 'langgraph'));
    const timed = async (run: () => Promise<unknown>) => {
      const started = performance.now();
      await run();
      return performance.now() - started;
    };
    for (let warm = 0; warm < 20; warm++) {
      await intent('warm up');
      await gated('warm up [gate]');
      await direct();
      await peer('warm up');
    }
    const intents: number[] = [];
    const calls: number[] = [];
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let run = 0; run < runs; run++) {
      intents.push(await intent(`note ${run}`));
      for (let call = 0; call < 5; call++) calls.push(await direct());
      ours.push(await gated(`note ${run} [gate]`));
      theirs.push(await timed(() => peer(`note ${run}`)));
    }
    const intentMs = summary(intents);
    const directCallMs = summary(calls);
    return {
      intentMs,
      directCallMs,
      overheadPerStepMs: (intentMs.p50 - 5 * directCallMs.p50) / 5,
      gated: { oursMs: p50(ours), langGraphMs: p50(theirs) },
    };
  } finally {
    model.close();
    await daemon.app.close();
    await daemon.release();
    rmSync(folder, { recursive: true, force: true });
  }
}
