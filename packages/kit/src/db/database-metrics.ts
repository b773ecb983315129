import type { KyselyConfig, LogEvent } from 'kysely';
import type { ServiceMetrics } from '../observability/metrics.ts';

/** How many connections the pool holds, how many are idle, how many callers wait for one. */
export interface PoolUse {
  total(): number;
  idle(): number;
  waiting(): number;
}

/**
 * The database's metrics: every query's latency by outcome (Kysely's query log, which times each query from send to
 * result), and the pool's connections by state and its waiters, read at scrape time. A pool whose waiters grow is a
 * service whose requests queue for the database, the first thing to look at when its latency climbs.
 */
export function databaseMetrics(metrics: ServiceMetrics | undefined, pool: PoolUse): Pick<KyselyConfig, 'log'> {
  if (metrics === undefined) return {};
  const queries = metrics.histogram<'outcome'>({
    name: 'db_query_duration_seconds',
    help: 'Database query latency, from sending the query to its result, by outcome (ok or error)',
    labelNames: ['outcome'],
  });
  metrics.gauge<'state'>({
    name: 'db_pool_connections',
    help: 'Database connections the pool holds, by state (idle or busy)',
    labelNames: ['state'],
    collect() {
      const idle = pool.idle();
      this.set({ state: 'idle' }, idle);
      this.set({ state: 'busy' }, pool.total() - idle);
    },
  });
  metrics.gauge({
    name: 'db_pool_waiting',
    help: 'Callers waiting for a database connection',
    collect() {
      this.set(pool.waiting());
    },
  });
  const ok = queries.labels('ok');
  const failed = queries.labels('error');
  return { log: (event: LogEvent) => (event.level === 'query' ? ok : failed).observe(event.queryDurationMillis / 1000) };
}
