import type { Clock } from '@platform/kit/clock';
import { type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { HostedArtifactTable, HostedDeploymentTable, HostedLogTable, MarketplaceSchema } from '../db/schema.ts';

type Db = Kysely<MarketplaceSchema>;

/** Stores an artifact unless the listing already has these bytes; true when it was new. */
export async function insertArtifact(
  db: Db,
  clock: Clock,
  listingId: string,
  artifact: Omit<HostedArtifactTable, 'listing_id' | 'created_at'>,
): Promise<boolean> {
  const row = await db
    .insertInto('hosted_artifacts')
    .values({
      ...artifact,
      listing_id: listingId,
      egress_allowlist: JSON.stringify(artifact.egress_allowlist) as never,
      bindings: JSON.stringify(artifact.bindings) as never,
      modules: JSON.stringify(artifact.modules) as never,
      created_at: clock.sqlNow(),
    })
    .onConflict((conflict) => conflict.columns(['listing_id', 'id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function findArtifact(db: Db, listingId: string, id: string): Promise<HostedArtifactTable | undefined> {
  return db.selectFrom('hosted_artifacts').selectAll().where('listing_id', '=', listingId).where('id', '=', id).executeTakeFirst();
}

/** The artifact uploaded last (by time, then id). */
export async function latestArtifact(db: Db, listingId: string): Promise<HostedArtifactTable | undefined> {
  return db
    .selectFrom('hosted_artifacts')
    .selectAll()
    .where('listing_id', '=', listingId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

export async function insertDeployment(db: Db, deployment: HostedDeploymentTable): Promise<void> {
  await db
    .insertInto('hosted_deployments')
    .values({ ...deployment, bindings: JSON.stringify(deployment.bindings) as never })
    .execute();
}

export async function updateDeployment(db: Db, id: string, changes: Updateable<HostedDeploymentTable>): Promise<void> {
  await db.updateTable('hosted_deployments').set(changes).where('id', '=', id).execute();
}

export async function findDeployment(db: Db, listingId: string, id: string): Promise<HostedDeploymentTable | undefined> {
  return db.selectFrom('hosted_deployments').selectAll().where('listing_id', '=', listingId).where('id', '=', id).executeTakeFirst();
}

export async function deploymentById(db: Db, id: string): Promise<HostedDeploymentTable | undefined> {
  return db.selectFrom('hosted_deployments').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Newest first, without the bundles. */
export async function listDeployments(db: Db, listingId: string, page: { limit: number; before?: string | undefined }) {
  let query = db
    .selectFrom('hosted_deployments')
    .select([
      'id',
      'listing_id',
      'artifact_id',
      'runner',
      'status',
      'failed_phase',
      'failure',
      'bindings',
      'created_at',
      'build_started_at',
      'build_finished_at',
      'deploy_started_at',
      'deploy_finished_at',
      'running_at',
      'stopped_at',
      'rollback_of',
    ])
    .where('listing_id', '=', listingId)
    .orderBy('id', 'desc')
    .limit(page.limit + 1);
  if (page.before !== undefined) query = query.where('id', '<', page.before);
  return query.execute();
}

/**
 * Points the listing's calls at a running deployment, unless a newer one already took them (two deployments racing:
 * the later one wins whichever finishes first). Returns the deployment it replaced, or undefined when it did not switch.
 */
export async function switchCurrentDeployment(db: Db, listingId: string, deploymentId: string): Promise<{ switched: boolean; previous: string | null }> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('listings').select('hosted_deployment_id').where('id', '=', listingId).forUpdate().executeTakeFirst();
    const previous = row?.hosted_deployment_id ?? null;
    if (previous !== null && previous > deploymentId) return { switched: false, previous };
    await trx.updateTable('listings').set({ hosted_deployment_id: deploymentId }).where('id', '=', listingId).execute();
    return { switched: true, previous };
  });
}

/** Deployments a stop interrupted (build or deploy in progress): failed, saying so. */
export async function failInterruptedDeployments(db: Db, clock: Clock): Promise<number> {
  const result = await db
    .updateTable('hosted_deployments')
    .set({ failed_phase: sql`status`, status: 'failed', failure: 'the marketplace stopped during this phase; deploy again', stopped_at: clock.sqlNow() })
    .where('status', 'in', ['build', 'deploy'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function insertLogLines(db: Db, rows: Array<Omit<HostedLogTable, 'id'>>): Promise<Array<{ id: bigint }>> {
  if (rows.length === 0) return [];
  return db.insertInto('hosted_logs').values(rows).returning('id').execute();
}

/** Keeps the newest `keep` lines of a listing. */
export async function trimLogLines(db: Db, listingId: string, keep: number): Promise<void> {
  await sql`delete from hosted_logs where listing_id = ${listingId} and id <= (
      select id from hosted_logs where listing_id = ${listingId} order by id desc offset ${keep} limit 1)`.execute(db);
}

export interface LogQuery {
  listingId: string;
  since?: Date | undefined;
  until?: Date | undefined;
  levels?: readonly string[] | undefined;
  deploymentId?: string | undefined;
  afterId?: bigint | undefined;
  limit: number;
}

/** The newest `limit` lines matching, oldest first (a tail); with afterId, the first `limit` lines after it. */
/** A stored log line. */
export type LogLine = Selectable<HostedLogTable>;

export async function queryLogLines(db: Db, query: LogQuery): Promise<LogLine[]> {
  let select = db.selectFrom('hosted_logs').selectAll().where('listing_id', '=', query.listingId);
  if (query.since) select = select.where('at', '>=', query.since);
  if (query.until) select = select.where('at', '<', query.until);
  if (query.levels) select = select.where('level', 'in', [...query.levels]);
  if (query.deploymentId) select = select.where('deployment_id', '=', query.deploymentId);
  if (query.afterId !== undefined) return (await select.where('id', '>', query.afterId).orderBy('id').limit(query.limit).execute()) as LogLine[];
  const rows = (await select.orderBy('id', 'desc').limit(query.limit).execute()) as LogLine[];
  return rows.reverse();
}

export async function runningDeploymentIds(db: Db, listingId: string): Promise<string[]> {
  const rows = await db.selectFrom('hosted_deployments').select('id').where('listing_id', '=', listingId).where('status', '=', 'running').execute();
  return rows.map((row) => row.id);
}
