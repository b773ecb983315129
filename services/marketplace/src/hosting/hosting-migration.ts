import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

export const hostingMigrationName = '0007_hosting';

/**
 * Hosted mode: artifacts (content-addressed per listing: the id is the SHA-256 of what was uploaded, so the same
 * bytes twice are one row), deployments (build → deploy → running, or failed in one of them; the bundle is kept so
 * a rollback or another instance runs the same bytes without building again), the deployment a listing's calls go
 * to, and the workers' log lines (the last 10,000 per listing).
 */
const statements = [
  `create table hosted_artifacts (
     listing_id uuid not null references listings (id),
     id text not null,
     main_module text not null,
     compatibility_date text not null,
     egress_allowlist jsonb not null,
     bindings jsonb not null,
     modules jsonb not null,
     size_bytes integer not null,
     created_at timestamptz not null,
     primary key (listing_id, id)
   )`,
  `create index hosted_artifacts_recent on hosted_artifacts (listing_id, created_at desc)`,
  `create table hosted_deployments (
     id uuid primary key,
     listing_id uuid not null references listings (id),
     artifact_id text not null,
     runner text not null,
     status text not null check (status in ('build', 'deploy', 'running', 'failed', 'stopped')),
     failed_phase text check (failed_phase in ('build', 'deploy', 'running')),
     failure text,
     bindings jsonb not null,
     bundle text,
     created_at timestamptz not null,
     build_started_at timestamptz,
     build_finished_at timestamptz,
     deploy_started_at timestamptz,
     deploy_finished_at timestamptz,
     running_at timestamptz,
     stopped_at timestamptz,
     rollback_of uuid
   )`,
  `create index hosted_deployments_listing on hosted_deployments (listing_id, id desc)`,
  `alter table listings add column hosted_deployment_id uuid`,
  `create table hosted_logs (
     id bigserial primary key,
     listing_id uuid not null,
     deployment_id uuid not null,
     invocation_id text,
     level text not null,
     message text not null,
     at timestamptz not null
   )`,
  `create index hosted_logs_listing on hosted_logs (listing_id, id)`,
];

export const hostingMigration: Migration = {
  async up(db) {
    for (const statement of statements) await sql.raw(statement).execute(db);
  },
};
