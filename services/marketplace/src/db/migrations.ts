import { nonceMigration } from '@platform/kit/auth/nonce-store';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { discoveryMigration, discoveryMigrationName } from '../discovery/filter-columns-migration.ts';
import { rankingMigration, rankingMigrationName } from '../discovery/ranking-migration.ts';
import { hostingMigration, hostingMigrationName } from '../hosting/hosting-migration.ts';

/** One statement at a time: PGlite's extended protocol takes a single command per query. */
function statements(text: string): Migration {
  return {
    async up(db) {
      for (const statement of text.split(/;\s*\n/)) if (statement.trim() !== '') await sql.raw(statement).execute(db);
    },
  };
}

/** Developers, listings and what is measured of them. */
const registrySql = `
      create table developers (
        address text primary key,
        created_at timestamptz not null,
        last_seen_at timestamptz not null
      );
      create table developer_nonces (
        nonce text primary key,
        created_at timestamptz not null,
        expires_at timestamptz not null
      );
      create index developer_nonces_expiry on developer_nonces (expires_at);
      create table wallet_request_nonces (
        address text not null,
        nonce text not null,
        expires_at timestamptz not null,
        primary key (address, nonce)
      );
      create index wallet_request_nonces_expiry on wallet_request_nonces (expires_at);
      create table listings (
        id uuid primary key,
        slug text not null unique,
        owner_address text not null,
        payout_did text,
        display_name text not null,
        summary text not null,
        kind text not null,
        status text not null check (status in ('draft', 'active', 'paused', 'delisted')),
        manifest jsonb not null,
        manifest_hash text not null,
        pricing_version integer not null,
        search_document text not null,
        search tsvector generated always as (to_tsvector('english', search_document)) stored,
        registry_status text not null check (registry_status in ('none', 'pending', 'registered', 'failed')),
        registry_tx_hash text,
        registry_block bigint,
        registry_manifest_hash text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        published_at timestamptz
      );
      create index listings_owner on listings (owner_address, created_at desc);
      create index listings_active on listings (status, id);
      create index listings_search on listings using gin (search);
      create table listing_stats (
        listing_id uuid primary key references listings (id),
        calls bigint not null default 0,
        successes bigint not null default 0,
        failures bigint not null default 0,
        latency_ms_total bigint not null default 0,
        revenue_micros bigint not null default 0,
        last_call_at timestamptz
      );
      create table invocations (
        id uuid primary key,
        listing_id uuid not null,
        operation text not null,
        caller_did text not null,
        idempotency_key text not null,
        request_hash text not null,
        rail text not null check (rail in ('hold', 'voucher', 'stream')),
        quote_id uuid,
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        cap_micros bigint not null check (cap_micros >= 0),
        cost_micros bigint not null check (cost_micros >= 0 and cost_micros <= cap_micros),
        units bigint not null check (units >= 0),
        hold_id uuid,
        channel_id uuid,
        capture_seq bigint,
        request_digest text not null,
        response_digest text,
        response jsonb,
        error jsonb,
        latency_ms integer,
        started_at timestamptz not null,
        finished_at timestamptz,
        receipt jsonb
      );
      create unique index invocations_caller_key on invocations (caller_did, idempotency_key) where idempotency_key <> '';
      create index invocations_listing on invocations (listing_id, started_at desc);
      create index invocations_caller on invocations (caller_did, started_at desc);
      create table idempotency (
        scope text not null,
        key text not null,
        request_hash text not null,
        status text not null check (status in ('pending', 'done')),
        response jsonb,
        created_at timestamptz not null,
        primary key (scope, key)
      );
`;

/** Quotes, tabs (channels and stream sessions: one hold, many signed cumulative amounts) and developer payouts. */
const paymentsSql = `
      create table quotes (
        id uuid primary key,
        listing_id uuid not null,
        operation text not null,
        caller_did text not null,
        unit_price_micros bigint not null,
        estimated_units bigint not null,
        max_total_micros bigint not null,
        pricing_version integer not null,
        expires_at timestamptz not null,
        digest text not null,
        signature text not null,
        created_at timestamptz not null
      );
      create table tabs (
        id uuid primary key,
        kind text not null check (kind in ('channel', 'stream')),
        caller_did text not null,
        caller_public_key text not null,
        listing_id uuid not null,
        operation text,
        unit_price_micros bigint,
        hold_id uuid not null,
        deposit_micros bigint not null check (deposit_micros > 0),
        spent_micros bigint not null check (spent_micros >= 0 and spent_micros <= deposit_micros),
        authorized_micros bigint not null,
        sequence bigint not null,
        last_voucher jsonb,
        status text not null check (status in ('open', 'closing', 'closed')),
        expires_at timestamptz not null,
        created_at timestamptz not null,
        closed_at timestamptz,
        capture_seq bigint,
        idempotency_key text not null
      );
      create unique index tabs_caller_key on tabs (caller_did, idempotency_key) where idempotency_key <> '';
      create index tabs_caller on tabs (caller_did, created_at desc);
      create index tabs_listing on tabs (listing_id, status);
      create index tabs_open_expiry on tabs (expires_at) where status = 'open';
      create table payouts (
        id uuid primary key,
        listing_id uuid not null,
        owner_address text not null,
        to_did text not null,
        amount_micros bigint not null check (amount_micros > 0),
        settlement_seq bigint,
        status text not null check (status in ('pending', 'paid', 'failed')),
        error text,
        created_at timestamptz not null
      );
      create index payouts_listing on payouts (listing_id, created_at desc);
      alter table invocations add column tab_sequence bigint;
`;

export const migrations: Record<string, Migration> = {
  '0001_auth_nonces': nonceMigration,
  '0002_registry': statements(registrySql),
  '0003_payments': statements(paymentsSql),
  [discoveryMigrationName]: discoveryMigration,
  [rankingMigrationName]: rankingMigration,
  // Revenue is summed from invocations where it is shown (earnings, analytics); the running total was never read.
  '0006_drop_stats_revenue': statements('alter table listing_stats drop column revenue_micros'),
  [hostingMigrationName]: hostingMigration,
};
