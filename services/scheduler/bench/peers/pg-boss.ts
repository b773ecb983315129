import { setTimeout as sleep } from 'node:timers/promises';
import type { JobResult, JobWithMetadata, WorkOptions } from 'pg-boss';
import { PgBoss } from 'pg-boss';
import { type Alarm, fireAlarm } from './alarm.ts';
import { measureRound } from './round.ts';
import type { PeerOptions, PeerResult } from './types.ts';

/*
 * Tuning, all in the direction of throughput and low lateness:
 * - pollingIntervalSeconds 0.5 is the floor pg-boss 12 accepts (MIN_POLLING_INTERVAL_MS = 500;
 *   lower throws "pollingIntervalSeconds must be at least every 500ms").
 * - pg-boss NOTIFY only fires when a job is *created*, never when a deferred job's startAfter
 *   arrives, so it cannot help alarms; worse, with notify on, idle polling drops to
 *   notifyPollingIntervalSeconds (30 s by default). So: no useListenNotify, plain polling.
 * - WORKERS separate work() calls started POLL_SECONDS / WORKERS apart: each polls every 500 ms but
 *   their phases interleave, so some worker looks every 125 ms (8 fetches/s when idle).
 * - BATCH_SIZE jobs per fetch, posted concurrently; burstWhenBatchFull refetches at once while
 *   batches come back full, so a backlog drains without waiting out the poll interval. 250 drained
 *   10k-job bursts fastest here; 100 and 500 were both slower (2 cores shared with Postgres).
 * - perJobResults settles each job on its own POST outcome, so one failure does not retry the batch.
 * - schedule/supervise off: no cron or maintenance work competes with the measured window.
 */
const POLL_SECONDS = 0.5;
const WORKERS = 4;
const BATCH_SIZE = 250;

export async function runPgBoss(opts: PeerOptions): Promise<PeerResult> {
  const boss = new PgBoss({
    connectionString: opts.databaseUrl,
    // One connection per worker for fetch/complete plus headroom for insert and the queue cache.
    max: WORKERS + 4,
    schedule: false,
    supervise: false,
  });
  // Without an 'error' listener an EventEmitter error would crash the process mid-run.
  boss.on('error', (error) => console.error('pg-boss error:', error));
  await boss.start();
  // Unique per run so a reused database cannot leak jobs from an earlier run into this one.
  const queue = `wake_${Date.now().toString(36)}`;
  try {
    // retryDelay 0: a failed POST is retried on the next fetch, as an alarm dispatcher would.
    await boss.createQueue(queue, { retryLimit: 3, retryDelay: 0 });
    const options = {
      pollingIntervalSeconds: POLL_SECONDS,
      batchSize: BATCH_SIZE,
      burstWhenBatchFull: true,
      // For retryCount, which the wake body reports as `attempt`.
      includeMetadata: true,
      perJobResults: true,
    } as const satisfies WorkOptions;
    const settle = async (job: JobWithMetadata<Alarm>): Promise<JobResult> => {
      try {
        await fireAlarm(opts.sinkUrl, opts.sinkToken, job.data, job.retryCount + 1);
        return { id: job.id, status: 'completed' };
      } catch (error) {
        return { id: job.id, status: 'failed', output: { error: String(error) } };
      }
    };
    const handler = (jobs: JobWithMetadata<Alarm>[]): Promise<JobResult[]> => Promise.all(jobs.map(settle));
    for (let w = 0; w < WORKERS; w++) {
      if (w > 0) await sleep((POLL_SECONDS * 1000) / WORKERS);
      // No explicit type arguments: they would pin O to WorkOptions and lose the per-job handler type.
      await boss.work(queue, options, handler);
    }
    return await measureRound('pg-boss', opts, async (alarms) => {
      await boss.insert(
        queue,
        alarms.map((data) => ({ data, startAfter: new Date(data.scheduled_for) })),
      );
    });
  } finally {
    // offWork waits for in-flight batches, so stop() does not fail jobs that are mid-POST.
    await boss.offWork(queue, { wait: true });
    await boss.stop({ graceful: true, timeout: 5_000 });
  }
}
