import type { Clock } from '@platform/kit/clock';
import { type Kysely, sql } from 'kysely';
import type { MarketplaceSchema } from '../db/schema.ts';

type Db = Kysely<MarketplaceSchema>;

/** Stores a sign-in nonce that lasts `lifetimeSeconds` by the database's clock; returns its expiry. */
export async function insertSignInNonce(db: Db, clock: Clock, nonce: string, lifetimeSeconds: number): Promise<Date> {
  const row = await db
    .insertInto('developer_nonces')
    .values({ nonce, created_at: clock.sqlNow(), expires_at: sql<Date>`${clock.sqlNow()} + make_interval(secs => ${lifetimeSeconds})` })
    .returning('expires_at')
    .executeTakeFirstOrThrow();
  return row.expires_at;
}

/** Consumes a sign-in nonce in one statement: true for the first caller before expiry, false for every other. */
export async function consumeSignInNonce(db: Db, clock: Clock, nonce: string): Promise<boolean> {
  const row = await db.deleteFrom('developer_nonces').where('nonce', '=', nonce).where('expires_at', '>', clock.sqlNow()).returning('nonce').executeTakeFirst();
  return row !== undefined;
}

/**
 * Claims a wallet request nonce for an address until `expiresAt`, in one statement: true when the nonce is new for
 * the address or its earlier use has expired (then it is taken again), false for a replay.
 */
export async function claimWalletNonce(db: Db, clock: Clock, claim: { address: string; nonce: string; expiresAt: Date }): Promise<boolean> {
  const row = await db
    .insertInto('wallet_request_nonces')
    .values({ address: claim.address, nonce: claim.nonce, expires_at: claim.expiresAt })
    .onConflict((conflict) =>
      conflict
        .columns(['address', 'nonce'])
        .doUpdateSet({ expires_at: (eb) => eb.ref('excluded.expires_at') })
        .where('wallet_request_nonces.expires_at', '<=', clock.sqlNow()),
    )
    .returning('nonce')
    .executeTakeFirst();
  return row !== undefined;
}

/** Records a developer the first time their wallet is seen, and when it was last seen. */
export async function touchDeveloper(db: Db, clock: Clock, address: string): Promise<void> {
  await db
    .insertInto('developers')
    .values({ address, created_at: clock.sqlNow(), last_seen_at: clock.sqlNow() })
    .onConflict((conflict) => conflict.column('address').doUpdateSet({ last_seen_at: clock.sqlNow() }))
    .execute();
}

export async function findDeveloper(db: Db, address: string) {
  return db.selectFrom('developers').selectAll().where('address', '=', address).executeTakeFirst();
}

/** Deletes expired sign-in and wallet request nonces; returns how many. */
export async function purgeExpiredDeveloperNonces(db: Db, clock: Clock): Promise<number> {
  const signIn = await db.deleteFrom('developer_nonces').where('expires_at', '<=', clock.sqlNow()).executeTakeFirst();
  const wallet = await db.deleteFrom('wallet_request_nonces').where('expires_at', '<=', clock.sqlNow()).executeTakeFirst();
  return Number(signIn.numDeletedRows) + Number(wallet.numDeletedRows);
}
