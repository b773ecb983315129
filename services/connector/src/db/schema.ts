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
}

export interface ConnectorSchema extends NonceSchema {
  connections: ConnectionTable;
}

export type ConnectionRow = Selectable<ConnectionTable>;
