import type { ColumnType, Selectable } from 'kysely';

export type UserState = 'active' | 'provisioning' | 'suspended' | 'deleted';
export const userStates: readonly UserState[] = ['active', 'provisioning', 'suspended', 'deleted'];

export interface UserTable {
  /** The identity provider's subject (`sub`), a UUID: also the user's daemon's DAEMON_USER_ID and DID label. */
  idp_user_id: string;
  email: string | null;
  handle: string | null;
  region: string;
  state: UserState;
  /** The environment: which provider runs it, its id there, its stable address (null where it moves), its volume. */
  provider: string;
  environment_id: string | null;
  address: string | null;
  volume: string | null;
  created_at: ColumnType<Date, Date | string, never>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface InviteTable {
  code: string;
  uses: number;
  used: ColumnType<number, number | undefined, number>;
  expires_at: Date | null;
  note: string | null;
  created_at: ColumnType<Date, Date | string, never>;
}

export interface RedemptionTable {
  idp_user_id: string;
  code: string;
  redeemed_at: ColumnType<Date, Date | string, never>;
}

export interface RouterSchema {
  users: UserTable;
  invites: InviteTable;
  invite_redemptions: RedemptionTable;
}

export type UserRow = Selectable<UserTable>;
export type InviteRow = Selectable<InviteTable>;
