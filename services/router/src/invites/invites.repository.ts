import { randomInt } from 'node:crypto';
import type { Clock } from '@platform/kit/clock';
import type { Kysely } from 'kysely';
import type { InviteRow, RouterSchema } from '../db/schema.ts';

/** Invite codes are typed by people: Crockford's base32 without look-alikes, in four groups of four. */
const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const invitePattern = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/;

export function newInviteCode(): string {
  const groups = Array.from({ length: 4 }, () => Array.from({ length: 4 }, () => alphabet[randomInt(alphabet.length)]).join(''));
  return groups.join('-');
}

/** A code as people type it: upper case, I and L read as 1, O as 0, spaces and missing dashes forgiven. */
export function normalizeInviteCode(typed: string): string {
  const compact = typed.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
  return compact.length === 16 ? (compact.match(/.{4}/g) as string[]).join('-') : compact;
}

export type Redemption = 'redeemed' | 'already_redeemed' | 'unknown' | 'expired' | 'used_up';

export class InvitesRepository {
  readonly #db: Kysely<RouterSchema>;
  readonly #clock: Clock;

  constructor(db: Kysely<RouterSchema>, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async create(options: { uses: number; expiresAt: Date | null; note: string | null }): Promise<InviteRow> {
    return this.#db
      .insertInto('invites')
      .values({ code: newInviteCode(), uses: options.uses, expires_at: options.expiresAt, note: options.note, created_at: this.#clock.now() })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  list(limit: number): Promise<InviteRow[]> {
    return this.#db.selectFrom('invites').selectAll().orderBy('created_at', 'desc').orderBy('code').limit(limit).execute();
  }

  async hasRedeemed(userId: string): Promise<boolean> {
    return (await this.#db.selectFrom('invite_redemptions').select('code').where('idp_user_id', '=', userId).executeTakeFirst()) !== undefined;
  }

  /**
   * Redeems a code for a user, once per user: the invite row is locked, its uses counted and the redemption recorded
   * in one transaction, so concurrent redemptions never pass `uses`.
   */
  async redeem(code: string, userId: string): Promise<Redemption> {
    try {
      return await this.#redeem(code, userId);
    } catch (error) {
      // The same user redeeming twice at once: the second insert hits the primary key and its transaction rolls back.
      if ((error as { code?: unknown }).code === '23505') return 'already_redeemed';
      throw error;
    }
  }

  #redeem(code: string, userId: string): Promise<Redemption> {
    return this.#db.transaction().execute(async (trx) => {
      if (await trx.selectFrom('invite_redemptions').select('code').where('idp_user_id', '=', userId).executeTakeFirst()) return 'already_redeemed';
      const invite = await trx.selectFrom('invites').selectAll().where('code', '=', code).forUpdate().executeTakeFirst();
      if (invite === undefined) return 'unknown';
      const now = this.#clock.now();
      if (invite.expires_at !== null && invite.expires_at <= now) return 'expired';
      if (invite.used >= invite.uses) return 'used_up';
      await trx
        .updateTable('invites')
        .set({ used: invite.used + 1 })
        .where('code', '=', code)
        .execute();
      await trx.insertInto('invite_redemptions').values({ idp_user_id: userId, code, redeemed_at: now }).execute();
      return 'redeemed';
    });
  }
}
