import { nonceMigration } from '@platform/kit/auth/nonce-store';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The ledger's tables. Plain SQL: the CHECK constraints are the last line of defence for the invariants
 * (no negative balance, a hold never pays out more than it locked), so they are easier to read in full.
 */
const ledgerSql = `
      create table accounts (
        did text primary key,
        balance bigint not null check (balance >= 0),
        held bigint not null check (held >= 0),
        payout_address text,
        created_at timestamptz not null
      );
      create table receipts (
        seq bigint primary key,
        kind text not null check (kind in ('deposit', 'transfer', 'hold', 'capture', 'release', 'expire', 'withdraw')),
        from_did text,
        to_did text,
        amount bigint not null check (amount > 0),
        ref text not null,
        hold_id uuid,
        at timestamptz not null,
        signature text not null,
        leaf_hash bytea not null
      );
      create index receipts_from_did on receipts (from_did, seq) where from_did is not null;
      create index receipts_to_did on receipts (to_did, seq) where to_did is not null;
      create table holds (
        id uuid primary key,
        payer text not null,
        payee text not null,
        amount bigint not null check (amount > 0),
        captured bigint not null check (captured >= 0),
        returned bigint not null check (returned >= 0),
        status text not null check (status in ('open', 'captured', 'released', 'expired')),
        ref text not null,
        expires_at timestamptz not null,
        created_at timestamptz not null,
        closed_at timestamptz,
        created_seq bigint not null,
        closed_seq bigint,
        check (captured + returned <= amount),
        check ((status = 'open') = (captured + returned = 0))
      );
      create index holds_open_expiry on holds (expires_at) where status = 'open';
      create index holds_payer_open on holds (payer) where status = 'open';
      create table idempotency (
        did text not null,
        key text not null,
        operation text not null,
        request_hash text not null,
        result jsonb not null,
        created_at timestamptz not null,
        primary key (did, key)
      );
      create table intent_nonces (
        did text not null,
        nonce text not null,
        expires_at timestamptz not null,
        primary key (did, nonce)
      );
      create index intent_nonces_expires_at on intent_nonces (expires_at);
      create table deposits (
        id uuid primary key,
        source text not null check (source in ('chain', 'faucet')),
        tx_hash text not null,
        log_index integer not null,
        did text not null,
        amount bigint not null check (amount > 0),
        seq bigint not null,
        created_at timestamptz not null,
        unique (tx_hash, log_index)
      );
      create table withdrawals (
        id uuid primary key,
        did text not null,
        amount bigint not null check (amount > 0),
        payout_address text not null,
        swap_out text,
        status text not null check (status in ('pending', 'broadcast', 'confirmed')),
        seq bigint not null,
        tx_hash text,
        created_at timestamptz not null
      );
      create index withdrawals_did on withdrawals (did, created_at);
      create table batches (
        id uuid primary key,
        number bigint not null unique,
        first_seq bigint not null,
        last_seq bigint not null,
        opened_at timestamptz not null,
        closed_at timestamptz not null,
        reason text not null,
        log_size bigint not null,
        log_root text not null,
        balance_root text not null,
        account_count integer not null,
        checkpoint text not null,
        balance_tree jsonb not null,
        anchor_status text not null,
        anchor_tx_hash text,
        anchor_block bigint
      );
      create index batches_log_root on batches (log_root);
      create index batches_balance_root on batches (balance_root);
      create index batches_last_seq on batches (last_seq);
      create table chain_outbox (
        id uuid primary key,
        kind text not null,
        payload jsonb not null,
        status text not null,
        created_at timestamptz not null
      );
`;

/**
 * The chain side: deposits seen in the vault (credited ones keep their vault index, the rest wait as unclaimed
 * until their DID is known), the claims that tell a DID from its hash, the batch's withdrawal tree and the
 * deposits its anchor covers, withdrawal progress, every transaction the sequencer's EVM key sends (written
 * before it is broadcast, so a restart finds it), and the watcher's cursor. The outbox it replaces is dropped:
 * the batches and withdrawals themselves say what is still to send.
 */
const chainSql = `
      alter table deposits add column chain_index bigint;
      alter table deposits add column block_number bigint;
      create unique index deposits_chain_index on deposits (chain_index) where chain_index is not null;
      create table unclaimed_deposits (
        chain_index bigint primary key,
        account_hash text not null,
        from_address text not null,
        amount bigint not null check (amount > 0),
        tx_hash text not null,
        log_index integer not null,
        block_number bigint not null,
        seen_at timestamptz not null,
        credited_seq bigint
      );
      create index unclaimed_deposits_waiting on unclaimed_deposits (account_hash) where credited_seq is null;
      create table deposit_claims (
        account_hash text primary key,
        did text not null,
        created_at timestamptz not null
      );
      alter table batches add column withdrawals_root text;
      alter table batches add column withdrawal_tree jsonb;
      alter table batches add column deposits_covered bigint not null default 0;
      alter table batches add column anchor_gas_used bigint;
      alter table withdrawals drop constraint withdrawals_status_check;
      alter table withdrawals add constraint withdrawals_status_check check (status in ('pending', 'broadcast', 'confirmed', 'failed'));
      alter table withdrawals add column batch_number bigint;
      alter table withdrawals add column block_number bigint;
      alter table withdrawals add column attempts integer not null default 0;
      alter table withdrawals add column last_error text;
      alter table withdrawals add column updated_at timestamptz;
      create index withdrawals_unpaid on withdrawals (seq) where status <> 'confirmed';
      create table chain_transactions (
        id uuid primary key,
        purpose text not null,
        ref text not null,
        nonce bigint not null,
        hashes jsonb not null,
        raw text not null,
        max_fee_per_gas numeric not null,
        max_priority_fee_per_gas numeric not null,
        status text not null check (status in ('sent', 'mined', 'confirmed', 'failed')),
        mined_hash text,
        block_number bigint,
        gas_used bigint,
        error text,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index chain_transactions_open on chain_transactions (nonce) where status in ('sent', 'mined');
      create index chain_transactions_ref on chain_transactions (purpose, ref);
      create table chain_state (
        name text primary key,
        value jsonb not null,
        updated_at timestamptz not null
      );
      drop table chain_outbox;
`;

/**
 * Stream positions: a batch's anchor event takes its id where the batch was written among the receipts (it is
 * written in order with the group commits), no longer from its log size. Batches already written keep the id they
 * had (2·log_size + 1), and receipts up to today's last keep 2·seq; later ones are spaced out so that anchors fit
 * between them (event-log.ts).
 */
const streamPositionsSql = `
      alter table batches add column event_id bigint;
      update batches set event_id = 2 * log_size + 1;
      alter table batches alter column event_id set not null;
      create unique index batches_event_id on batches (event_id);
      create table event_ids (legacy_seq bigint not null);
      insert into event_ids (legacy_seq) select coalesce(max(seq), 0) from receipts
`;

/** One statement at a time: PGlite's extended protocol takes a single command per query. */
function statements(text: string): Migration {
  return {
    async up(db) {
      for (const statement of text.split(/;\s*\n/)) if (statement.trim() !== '') await sql.raw(statement).execute(db);
    },
  };
}

export const migrations: Record<string, Migration> = {
  '0001_auth_nonces': nonceMigration,
  '0002_ledger': statements(ledgerSql),
  '0003_chain': statements(chainSql),
  '0004_stream_positions': statements(streamPositionsSql),
  // `GET /v1/holds` lists an account's open holds on both sides; the payer's side had its index already.
  '0005_holds_payee_open': statements("create index holds_payee_open on holds (payee) where status = 'open'"),
};
