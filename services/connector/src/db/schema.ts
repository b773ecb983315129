import type { NonceSchema } from '@platform/kit/auth/nonce-store';
import type { ColumnType, Selectable } from 'kysely';

export type ConnectionStatus = 'connected' | 'needs_reconnect';

/** Bytes come back as Buffer from pg and as Uint8Array from PGlite; the repository makes both Buffers. */
type Bytes = ColumnType<Uint8Array, Buffer, Buffer>;

export interface ConnectionTable {
  id: string;
  /** The user id from the DID label of the principal that connected; never taken from a body. */
  owner: string;
  connector: string;
  status: ConnectionStatus;
  /** The scopes the provider granted (which may be fewer than asked), as a JSON array of strings. */
  scopes: ColumnType<string[], string, string>;
  /** The sealed credential (src/vault/vault.ts): which key, then AES-256-GCM's IV, ciphertext and tag. */
  key_id: string;
  iv: Bytes;
  ciphertext: Bytes;
  tag: Bytes;
  created_at: Date;
  updated_at: Date;
  /** Until when one instance holds the right to refresh this credential (src/oauth/refresher.ts); null when free. */
  refresh_claimed_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The token of the claim in `refresh_claimed_until`, set with it: the holder's release and write are guarded on it. */
  refresh_claim: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A connect flow begun and not yet finished: single use, found by the SHA-256 of its `state`. */
export interface ConnectStateTable {
  /** SHA-256 of the `state` sent to the provider; the state itself is never stored. */
  state_hash: Bytes;
  owner: string;
  connector: string;
  /** The PKCE code verifier, sealed by the vault and bound to owner and connector like a credential. */
  key_id: string;
  iv: Bytes;
  ciphertext: Bytes;
  tag: Bytes;
  expires_at: Date;
  created_at: Date;
}

export interface ConnectorSchema extends NonceSchema {
  connections: ConnectionTable;
  connect_states: ConnectStateTable;
}

export type ConnectionRow = Selectable<ConnectionTable>;
