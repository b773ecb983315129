import { Logger, makeWorkerUtils, run, type Task } from 'graphile-worker';
import pg from 'pg';
import { type Alarm, fireAlarm } from './alarm.ts';
import { measureRound } from './round.ts';
import type { PeerOptions, PeerResult } from './types.ts';

/*
 * Tuning, all in the direction of throughput and low lateness:
 * - CONCURRENCY jobs in flight (each job is one POST, so this is the POST parallelism). 50 with a
 *   200-job localQueue drained 10k-job bursts fastest here; 32/100 and 100/500 were slower.
 * - localQueue: the pool, not each of the CONCURRENCY workers, fetches and locks LOCAL_QUEUE jobs
 *   per query and hands them out in memory; without it every idle worker polls on its own
 *   (CONCURRENCY queries per pollInterval) and every job costs a fetch round trip.
 * - POLL_MS 100: graphile-worker has no floor; with localQueue there is one poller per pool, so
 *   100 ms is 10 fetches/s when idle, about pg-boss's 8/s at its 500 ms floor with 4 staggered workers.
 * - LISTEN/NOTIFY ("jobs:insert") is always on, but it fires when a job is inserted, not when its
 *   run_at arrives, so deferred alarms are found by polling here as well.
 * - completeJobBatchDelay 0: completions made in the same tick go out as one query.
 */
const CONCURRENCY = 50;
const LOCAL_QUEUE = 200;
const POLL_MS = 100;

// Only warnings and errors: info/debug lines per job would cost more than the jobs.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`graphile-worker ${level}: ${message}`);
});

/**
 * Our own pool rather than `connectionString`: graphile-worker ends a pool it created without
 * awaiting it and drops its error handlers first, so a connection still closing when the bench
 * drops the database raises an unhandled 'error' and kills the process. Awaiting end() here avoids that.
 */
function makePool(databaseUrl: string): pg.Pool {
  // The docs' advice: concurrentJobs + 2, so starting and completing jobs never queue for a client.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY + 2 });
  const report = (error: Error): void => console.error(`graphile-worker pool: ${error.message}`);
  pool.on('error', report);
  pool.on('connect', (client) => client.on('error', report));
  return pool;
}

export async function runGraphileWorker(opts: PeerOptions): Promise<PeerResult> {
  const pgPool = makePool(opts.databaseUrl);
  try {
    const utils = await makeWorkerUtils({ pgPool, logger });
    try {
      // Schema install before anything is timed.
      await utils.migrate();
      return await runRound(opts, pgPool, (alarms, identifier) =>
        utils.addJobs(alarms.map((payload) => ({ identifier, payload, runAt: new Date(payload.scheduled_for), maxAttempts: 4 }))),
      );
    } finally {
      await utils.release();
    }
  } finally {
    await pgPool.end();
  }
}

/** Starts the runner, measures one round with `addJobs` as the bulk insert, stops the runner. */
async function runRound(opts: PeerOptions, pgPool: pg.Pool, addJobs: (alarms: Alarm[], identifier: string) => Promise<unknown>): Promise<PeerResult> {
  // Unique per run so a reused database cannot leak jobs from an earlier run into this one.
  const identifier = `wake_${Date.now().toString(36)}`;
  // helpers.job.attempts is already incremented for this run, so it is 1 on the first try.
  const wake: Task = (payload, helpers) => fireAlarm(opts.sinkUrl, opts.sinkToken, payload as Alarm, helpers.job.attempts);
  const runner = await run({
    pgPool,
    taskList: { [identifier]: wake },
    noHandleSignals: true,
    preset: {
      worker: {
        concurrentJobs: CONCURRENCY,
        pollInterval: POLL_MS,
        localQueue: { size: LOCAL_QUEUE },
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
        logger,
      },
    },
  });
  try {
    return await measureRound('graphile-worker', opts, async (alarms) => {
      await addJobs(alarms, identifier);
    });
  } finally {
    await runner.stop();
  }
}
