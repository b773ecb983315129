import { type Kysely, sql } from 'kysely';
import type { AccountTable, DepositTable, HoldTable, IdempotencyTable, SettlementSchema } from '../db/schema.ts';
import type { MovementCommand } from './commands.ts';
import { depositKey, type Group, type GroupBase, idempotencyKey, nonceKey } from './group.ts';

type Db = Kysely<SettlementSchema>;

/** Most expired holds returned in one sweep; the next sweep takes the rest. */
const expireBatch = 500;

const unique = <T>(values: Iterable<T>) => [...new Set(values)];

/**
 * Reads, in a handful of bulk queries, every committed row a group of commands may touch. Accounts already
 * in the writer's cache are not read again: only the writer changes them, so its cache is the truth.
 */
export async function loadGroupBase(db: Db, commands: readonly MovementCommand[], accountCache: Map<string, AccountTable>, now: Date): Promise<GroupBase> {
  const dids: string[] = [];
  const holdIds: string[] = [];
  const idempotency: Array<[string, string]> = [];
  const nonces: Array<[string, string]> = [];
  const deposits: Array<[string, number]> = [];
  let expire = false;
  for (const command of commands) {
    switch (command.kind) {
      case 'pay':
        dids.push(command.from, command.to);
        break;
      case 'hold':
        dids.push(command.payer);
        break;
      case 'capture':
      case 'release':
        holdIds.push(command.holdId);
        break;
      case 'withdraw':
      case 'bind':
        dids.push(command.did);
        break;
      case 'deposit':
        dids.push(command.did);
        deposits.push([command.txHash, command.logIndex]);
        break;
      case 'expire':
        expire = true;
        break;
    }
    if ('idempotency' in command && command.idempotency) idempotency.push([ownerOf(command), command.idempotency.key]);
    if ('nonce' in command && command.nonce) nonces.push([command.nonce.did, command.nonce.nonce]);
  }

  const holds = new Map<string, HoldTable>();
  const dueHolds: string[] = [];
  if (holdIds.length > 0) for (const hold of await db.selectFrom('holds').selectAll().where('id', 'in', unique(holdIds)).execute()) holds.set(hold.id, hold);
  if (expire) {
    const due = await db
      .selectFrom('holds')
      .selectAll()
      .where('status', '=', 'open')
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(expireBatch)
      .execute();
    for (const hold of due) {
      holds.set(hold.id, hold);
      dueHolds.push(hold.id);
    }
  }
  for (const hold of holds.values()) dids.push(hold.payer, hold.payee);

  const missing = unique(dids).filter((did) => !accountCache.has(did));
  if (missing.length > 0)
    for (const account of await db.selectFrom('accounts').selectAll().where('did', 'in', missing).execute()) accountCache.set(account.did, account);

  const idempotencyRows = new Map<string, IdempotencyTable>();
  if (idempotency.length > 0) {
    const rows = await db
      .selectFrom('idempotency')
      .selectAll()
      .where('did', 'in', unique(idempotency.map(([did]) => did)))
      .where('key', 'in', unique(idempotency.map(([, key]) => key)))
      .execute();
    for (const row of rows) idempotencyRows.set(idempotencyKey(row.did, row.key), row);
  }
  const usedNonces = new Set<string>();
  if (nonces.length > 0) {
    const rows = await db
      .selectFrom('intent_nonces')
      .select(['did', 'nonce'])
      .where('did', 'in', unique(nonces.map(([did]) => did)))
      .where('nonce', 'in', unique(nonces.map(([, nonce]) => nonce)))
      .execute();
    for (const row of rows) usedNonces.add(nonceKey(row.did, row.nonce));
  }
  const depositRows = new Map<string, DepositTable>();
  if (deposits.length > 0) {
    const rows = await db
      .selectFrom('deposits')
      .selectAll()
      .where('tx_hash', 'in', unique(deposits.map(([hash]) => hash)))
      .execute();
    for (const row of rows) depositRows.set(depositKey(row.tx_hash, row.log_index), row);
  }
  return { accounts: accountCache, holds, idempotency: idempotencyRows, nonces: usedNonces, deposits: depositRows, dueHolds };
}

/** The DID an idempotency key is scoped to: the authorising principal of the command. */
function ownerOf(command: MovementCommand): string {
  switch (command.kind) {
    case 'pay':
      return command.from;
    case 'hold':
      return command.payer;
    case 'capture':
    case 'release':
      return command.caller;
    case 'withdraw':
    case 'deposit':
    case 'bind':
      return command.did;
    case 'expire':
      return '';
  }
}

// JSON for jsonb_to_recordset: bigints as decimal strings and bytes as bytea hex, both read back exactly.
function json(rows: readonly object[]): string {
  return JSON.stringify(rows, function (this: Record<string, unknown>, key, value) {
    if (typeof value === 'bigint') return value.toString();
    // Read the holder's own value: JSON.stringify has already turned a Buffer into {type, data} by now.
    const original = this[key];
    if (Buffer.isBuffer(original)) return `\\x${original.toString('hex')}`;
    return value;
  });
}

/**
 * Writes a group in one transaction: a statement per table touched, each carrying all its rows as one jsonb
 * parameter (so the cost per group is flat, whatever its size), then NOTIFY for stream readers.
 */
export async function writeGroup(trx: Db, group: Group): Promise<void> {
  if (group.accounts.size > 0) {
    await sql`insert into accounts (did, balance, held, payout_address, created_at)
      select did, balance, held, payout_address, created_at
      from jsonb_to_recordset(${json([...group.accounts.values()])}::jsonb)
        as x(did text, balance bigint, held bigint, payout_address text, created_at timestamptz)
      on conflict (did) do update set balance = excluded.balance, held = excluded.held, payout_address = excluded.payout_address`.execute(trx);
  }
  if (group.receipts.length > 0) {
    await sql`insert into receipts (seq, kind, from_did, to_did, amount, ref, hold_id, at, signature, leaf_hash)
      select seq, kind, from_did, to_did, amount, ref, hold_id, at, signature, leaf_hash
      from jsonb_to_recordset(${json(group.receipts)}::jsonb)
        as x(seq bigint, kind text, from_did text, to_did text, amount bigint, ref text, hold_id uuid, at timestamptz, signature text, leaf_hash bytea)`.execute(
      trx,
    );
  }
  if (group.holds.size > 0) {
    await sql`insert into holds (id, payer, payee, amount, captured, returned, status, ref, expires_at, created_at, closed_at, created_seq, closed_seq)
      select id, payer, payee, amount, captured, returned, status, ref, expires_at, created_at, closed_at, created_seq, closed_seq
      from jsonb_to_recordset(${json([...group.holds.values()])}::jsonb)
        as x(id uuid, payer text, payee text, amount bigint, captured bigint, returned bigint, status text, ref text,
             expires_at timestamptz, created_at timestamptz, closed_at timestamptz, created_seq bigint, closed_seq bigint)
      on conflict (id) do update set captured = excluded.captured, returned = excluded.returned, status = excluded.status,
        closed_at = excluded.closed_at, closed_seq = excluded.closed_seq`.execute(trx);
  }
  if (group.idempotency.size > 0) {
    await sql`insert into idempotency (did, key, operation, request_hash, result, created_at)
      select did, key, operation, request_hash, result, created_at
      from jsonb_to_recordset(${json([...group.idempotency.values()])}::jsonb)
        as x(did text, key text, operation text, request_hash text, result jsonb, created_at timestamptz)`.execute(trx);
  }
  if (group.nonces.length > 0) {
    await sql`insert into intent_nonces (did, nonce, expires_at)
      select did, nonce, expires_at from jsonb_to_recordset(${json(group.nonces)}::jsonb) as x(did text, nonce text, expires_at timestamptz)`.execute(trx);
  }
  if (group.deposits.length > 0) {
    await sql`insert into deposits (id, source, tx_hash, log_index, did, amount, seq, created_at)
      select id, source, tx_hash, log_index, did, amount, seq, created_at
      from jsonb_to_recordset(${json(group.deposits)}::jsonb)
        as x(id uuid, source text, tx_hash text, log_index integer, did text, amount bigint, seq bigint, created_at timestamptz)`.execute(trx);
  }
  if (group.withdrawals.length > 0) {
    await sql`insert into withdrawals (id, did, amount, payout_address, swap_out, status, seq, tx_hash, created_at)
      select id, did, amount, payout_address, swap_out, status, seq, tx_hash, created_at
      from jsonb_to_recordset(${json(group.withdrawals)}::jsonb)
        as x(id uuid, did text, amount bigint, payout_address text, swap_out text, status text, seq bigint, tx_hash text, created_at timestamptz)`.execute(trx);
  }
  await writeOutboxAndEvents(trx, group.outbox, group.events);
}

/** Shared with the window close: chain records and stream events, then the wake-up for stream readers. */
export async function writeOutboxAndEvents(trx: Db, outbox: readonly object[], events: ReadonlyArray<{ id: bigint }>): Promise<void> {
  if (outbox.length > 0) {
    await sql`insert into chain_outbox (id, kind, payload, status, created_at)
      select id, kind, payload, status, created_at
      from jsonb_to_recordset(${json(outbox)}::jsonb) as x(id uuid, kind text, payload jsonb, status text, created_at timestamptz)`.execute(trx);
  }
  if (events.length > 0) {
    await sql`insert into events (id, type, payload, at)
      select id, type, payload, at from jsonb_to_recordset(${json(events)}::jsonb) as x(id bigint, type text, payload jsonb, at timestamptz)`.execute(trx);
    await sql`select pg_notify('settlement_events', ${String(events.at(-1)?.id)})`.execute(trx);
  }
}
