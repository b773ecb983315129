import { notify } from '@platform/kit/db/channels';
import { prepared } from '@platform/kit/db/prepared-statements';
import { type Kysely, sql } from 'kysely';
import type { AccountTable, BatchTable, DepositTable, HoldTable, IdempotencyTable, SettlementSchema } from '../db/schema.ts';
import { eventsChannel } from '../stream/event-log.ts';
import type { MovementCommand } from './commands.ts';
import { depositKey, type Group, type GroupBase, idempotencyKey, nonceKey } from './group.ts';

type Db = Kysely<SettlementSchema>;

/** Most expired holds returned in one sweep; the next sweep takes the rest. */
const expireBatch = 500;

const unique = <T>(values: Iterable<T>) => [...new Set(values)];

/**
 * Reads, in a handful of bulk queries, every row a group of commands may touch, as the previous group leaves
 * it: `pending`, the group still being written, wins over what is committed (the next group is applied while
 * the previous one commits). Accounts in the writer's cache are not read again: only the writer changes them.
 */
export async function loadGroupBase(
  db: Db,
  commands: readonly MovementCommand[],
  caches: WriterCaches,
  pending: Group | undefined,
  now: Date,
): Promise<GroupBase> {
  const accountCache = caches.accounts;
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
  // Holds this writer committed lately are known as they stand (only the writer changes them): a capture or
  // release of a recent hold, the marketplace's every paid call, costs no read.
  const unknownHolds = unique(holdIds).filter((id) => {
    const known = caches.holds.get(id);
    if (known) holds.set(id, known);
    return !known;
  });
  if (unknownHolds.length > 0) {
    for (const hold of await db.selectFrom('holds').selectAll().where('id', 'in', unknownHolds).execute()) {
      holds.set(hold.id, hold);
      caches.holds.remember([[hold.id, hold]]);
    }
  }
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
  for (const id of holdIds) {
    const newer = pending?.holds.get(id);
    if (newer) holds.set(id, newer);
  }
  for (const hold of holds.values()) {
    const newer = pending?.holds.get(hold.id);
    if (newer) holds.set(hold.id, newer);
    dids.push(hold.payer, hold.payee);
  }

  const wanted = unique(dids);
  const missing = wanted.filter((did) => !accountCache.has(did) && !pending?.accounts.has(did));
  if (missing.length > 0) {
    for (const account of await db.selectFrom('accounts').selectAll().where('did', 'in', missing).execute()) accountCache.set(account.did, account);
  }
  const accounts = new Map<string, AccountTable>();
  for (const did of wanted) {
    const account = pending?.accounts.get(did) ?? accountCache.get(did);
    if (account) accounts.set(did, account);
  }

  const idempotencyRows = new Map<string, IdempotencyTable>();
  for (const [did, key] of idempotency) {
    const recent = caches.idempotency.get(idempotencyKey(did, key));
    if (recent) idempotencyRows.set(idempotencyKey(did, key), recent);
  }
  // Usually skipped: a key neither recent nor pending is almost always new, and the primary key refuses the
  // whole group's statement if one was not (isKeyConflict). The writer then applies those commands again with this read.
  if (caches.readKeys && idempotency.length > 0) {
    const rows = await sql<IdempotencyTable>`select i.* from idempotency i
      join jsonb_to_recordset(${JSON.stringify(idempotency.map(([did, key]) => ({ did, key })))}::jsonb) as x(did text, key text) using (did, key)`.execute(db);
    for (const row of rows.rows) idempotencyRows.set(idempotencyKey(row.did, row.key), row);
  }
  const usedNonces = new Set<string>();
  for (const [did, nonce] of nonces) if (caches.nonces.get(nonceKey(did, nonce))) usedNonces.add(nonceKey(did, nonce));
  // Like idempotency keys: an intent's nonce is random, so one this writer has not just used is almost always new,
  // and the primary key refuses the group if it was not; the second pass reads them.
  if (caches.readKeys && nonces.length > 0) {
    const rows = await sql<{ did: string; nonce: string }>`select n.did, n.nonce from intent_nonces n
      join jsonb_to_recordset(${JSON.stringify(nonces.map(([did, nonce]) => ({ did, nonce })))}::jsonb) as x(did text, nonce text) using (did, nonce)`.execute(
      db,
    );
    for (const row of rows.rows) usedNonces.add(nonceKey(row.did, row.nonce));
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
  if (pending) {
    for (const [key, row] of pending.idempotency) idempotencyRows.set(key, row);
    for (const row of pending.nonces) usedNonces.add(nonceKey(row.did, row.nonce));
    for (const row of pending.deposits) depositRows.set(depositKey(row.tx_hash, row.log_index), row);
  }
  return { accounts, holds, idempotency: idempotencyRows, nonces: usedNonces, deposits: depositRows, dueHolds };
}

/** What the writer keeps between groups so that most groups read nothing before they are applied. */
export interface WriterCaches {
  accounts: Map<string, AccountTable>;
  /** Idempotency records committed lately, by idempotencyKey(did, key). */
  idempotency: RecentRows<IdempotencyTable>;
  /** Intent nonces consumed lately, by nonceKey(did, nonce). */
  nonces: RecentRows<true>;
  /** Holds as this writer last committed them, by id. */
  holds: RecentRows<HoldTable>;
  /** Read idempotency keys and nonces from the database: the second pass after the primary key refused a group. */
  readKeys: boolean;
}

/**
 * Rows this writer committed lately, newest last, so a retry, a replayed nonce or a capture is answered without a
 * database read. Bounded: an older one is still found, through the primary key refusing the write and a second
 * pass (keys and nonces), or by reading it (holds).
 */
export class RecentRows<Row> {
  readonly #rows = new Map<string, Row>();
  readonly #max: number;

  constructor(max = 100_000) {
    this.#max = max;
  }

  get(key: string): Row | undefined {
    return this.#rows.get(key);
  }

  remember(rows: Iterable<[string, Row]>): void {
    for (const [key, row] of rows) this.#rows.set(key, row);
    for (const key of this.#rows.keys()) {
      if (this.#rows.size <= this.#max) break;
      this.#rows.delete(key);
    }
  }

  clear(): void {
    this.#rows.clear();
  }
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

// JSON for jsonb_to_recordset: bigints as decimal strings and bytes as bytea hex, both read back exactly. Written
// member by member from the table's columns: JSON.stringify with a replacer calls it for every key of every row,
// which was a visible share of the writer's time per pay.
function json(rows: readonly object[], columns: Columns): string {
  const parts: string[] = [];
  // A group's rows share its one time (each receipt's `at`, each idempotency record's `created_at`): formatted once.
  let lastDate: Date | undefined;
  let lastDateJson = '';
  const dateJson = (date: Date): string => {
    if (date !== lastDate) {
      lastDate = date;
      lastDateJson = jsonValue(date);
    }
    return lastDateJson;
  };
  for (const row of rows) {
    const record = row as Record<string, unknown>;
    let text = '';
    for (const [name] of columns) {
      const value = record[name];
      // A missing member is null to jsonb_to_recordset: nulls (a pay's hold_id, an unbound payout address) are left out.
      if (value === null || value === undefined) continue;
      text += `${text === '' ? '{' : ','}"${name}":${value instanceof Date ? dateJson(value) : jsonValue(value)}`;
    }
    parts.push(text === '' ? '{}' : `${text}}`);
  }
  return `[${parts.join(',')}]`;
}

function jsonValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'bigint') return `"${value}"`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Date) return `"${value.toISOString()}"`;
  if (Buffer.isBuffer(value)) return `"\\\\x${value.toString('hex')}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  // jsonb documents (a stored result, a tree dump) that may hold bigints anywhere. Most hold none, and JSON.stringify
  // without a replacer takes half the time it takes with one (measured on a hold's answer); a bigint makes it throw.
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, (_key, member) => (typeof member === 'bigint' ? member.toString() : member));
  }
}

type Columns = ReadonlyArray<readonly [name: string, type: string]>;

/** Every table the writer inserts into: its columns with their SQL types, and what a conflict updates. */
const tables = {
  accounts: {
    columns: [
      ['did', 'text'],
      ['balance', 'bigint'],
      ['held', 'bigint'],
      ['payout_address', 'text'],
      ['created_at', 'timestamptz'],
    ],
    onConflict: 'on conflict (did) do update set balance = excluded.balance, held = excluded.held, payout_address = excluded.payout_address',
  },
  receipts: {
    columns: [
      ['seq', 'bigint'],
      ['kind', 'text'],
      ['from_did', 'text'],
      ['to_did', 'text'],
      ['amount', 'bigint'],
      ['ref', 'text'],
      ['hold_id', 'uuid'],
      ['at', 'timestamptz'],
      ['signature', 'text'],
      ['leaf_hash', 'bytea'],
    ],
  },
  holds: {
    columns: [
      ['id', 'uuid'],
      ['payer', 'text'],
      ['payee', 'text'],
      ['amount', 'bigint'],
      ['captured', 'bigint'],
      ['returned', 'bigint'],
      ['status', 'text'],
      ['ref', 'text'],
      ['expires_at', 'timestamptz'],
      ['created_at', 'timestamptz'],
      ['closed_at', 'timestamptz'],
      ['created_seq', 'bigint'],
      ['closed_seq', 'bigint'],
    ],
    onConflict:
      'on conflict (id) do update set captured = excluded.captured, returned = excluded.returned, status = excluded.status, closed_at = excluded.closed_at, closed_seq = excluded.closed_seq',
  },
  idempotency: {
    columns: [
      ['did', 'text'],
      ['key', 'text'],
      ['operation', 'text'],
      ['request_hash', 'text'],
      ['result', 'jsonb'],
      ['created_at', 'timestamptz'],
    ],
  },
  intent_nonces: {
    columns: [
      ['did', 'text'],
      ['nonce', 'text'],
      ['expires_at', 'timestamptz'],
    ],
  },
  deposits: {
    columns: [
      ['id', 'uuid'],
      ['source', 'text'],
      ['tx_hash', 'text'],
      ['log_index', 'integer'],
      ['did', 'text'],
      ['amount', 'bigint'],
      ['seq', 'bigint'],
      ['created_at', 'timestamptz'],
      ['chain_index', 'bigint'],
      ['block_number', 'bigint'],
    ],
  },
  withdrawals: {
    columns: [
      ['id', 'uuid'],
      ['did', 'text'],
      ['amount', 'bigint'],
      ['payout_address', 'text'],
      ['swap_out', 'text'],
      ['status', 'text'],
      ['seq', 'bigint'],
      ['tx_hash', 'text'],
      ['created_at', 'timestamptz'],
      ['batch_number', 'bigint'],
      ['block_number', 'bigint'],
      ['attempts', 'integer'],
      ['last_error', 'text'],
      ['updated_at', 'timestamptz'],
    ],
  },
  events: {
    columns: [
      ['id', 'bigint'],
      ['type', 'text'],
      ['payload', 'jsonb'],
      ['at', 'timestamptz'],
    ],
  },
  batches: {
    columns: [
      ['id', 'uuid'],
      ['number', 'bigint'],
      ['first_seq', 'bigint'],
      ['last_seq', 'bigint'],
      ['opened_at', 'timestamptz'],
      ['closed_at', 'timestamptz'],
      ['reason', 'text'],
      ['log_size', 'bigint'],
      ['log_root', 'text'],
      ['balance_root', 'text'],
      ['account_count', 'integer'],
      ['checkpoint', 'text'],
      ['balance_tree', 'jsonb'],
      ['anchor_status', 'text'],
      ['anchor_tx_hash', 'text'],
      ['anchor_block', 'bigint'],
      ['withdrawals_root', 'text'],
      ['withdrawal_tree', 'jsonb'],
      ['deposits_covered', 'bigint'],
      ['anchor_gas_used', 'bigint'],
      ['event_id', 'bigint'],
    ],
  },
} satisfies Record<string, { columns: Columns; onConflict?: string }>;

export type TableName = keyof typeof tables;
export type TableRows = Partial<Record<TableName, readonly object[]>>;

/**
 * Writes rows into several tables as ONE statement: a data-modifying CTE per table, each carrying all its rows as
 * one jsonb parameter, then NOTIFY (with the highest event id) for stream readers. A single statement is atomic on its own and durable when
 * it returns (synchronous_commit), so a group costs one round trip however many rows and tables it touches.
 * Table and column names come from the constant above, never from input.
 */
export async function writeRows(db: Db, rows: TableRows, notifyEventId?: bigint): Promise<void> {
  const written = Object.entries(rows).filter(([, list]) => list && list.length > 0) as Array<[TableName, readonly object[]]>;
  if (written.length === 0) return;
  const parts = written.map(([table, list], index) => {
    const spec: { columns: Columns; onConflict?: string } = tables[table];
    const names = spec.columns.map(([name]) => name).join(', ');
    const definitions = spec.columns.map(([name, type]) => `${name} ${type}`).join(', ');
    return sql`${sql.raw(`w${index}`)} as (insert into ${sql.raw(table)} (${sql.raw(names)})
        select ${sql.raw(names)} from jsonb_to_recordset(${json(list, spec.columns)}::jsonb) as x(${sql.raw(definitions)}) ${sql.raw(spec.onConflict ?? '')})`;
  });
  const announce = notifyEventId === undefined ? sql`null` : notify(eventsChannel, String(notifyEventId));
  await prepared(sql`with ${sql.join(parts)} select ${announce}`).execute(db);
}

/**
 * The write failed only because an idempotency key or an intent nonce already existed (the statement, and so the
 * whole group, was refused by the primary key): apply the group again, reading its keys and nonces first.
 */
export function isKeyConflict(error: unknown): boolean {
  const failure = error as { code?: unknown; constraint?: unknown } | null;
  return failure?.code === '23505' && (failure.constraint === 'idempotency_pkey' || failure.constraint === 'intent_nonces_pkey');
}

/**
 * A group's rows, in one statement, with the batch that becomes visible right after its receipts when one is ready
 * (see Sequencer); `headId` is the highest event id the statement adds, for NOTIFY.
 */
export async function writeGroup(db: Db, group: Group, headId: bigint | undefined, batch?: BatchTable): Promise<void> {
  await writeRows(
    db,
    {
      accounts: [...group.accounts.values()],
      receipts: group.receipts,
      holds: [...group.holds.values()],
      idempotency: [...group.idempotency.values()],
      intent_nonces: group.nonces,
      deposits: group.deposits,
      withdrawals: group.withdrawals,
      ...(batch ? { batches: [batch] } : {}),
    },
    headId,
  );
}
