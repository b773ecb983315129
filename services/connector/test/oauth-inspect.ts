import { createHash } from 'node:crypto';
import type { Binding } from '../src/vault/vault.ts';
import type { Workspace } from './workspace.ts';

export const connectStateBinding = (owner: string, connector: string): Binding => ({ owner, connector });

/** The PKCE verifier stored for a state, unsealed as only the service could: a test searches outputs for it. */
export async function unsealVerifier(w: Workspace, state: string, binding: Binding): Promise<string> {
  const hash = createHash('sha256').update(state).digest();
  const row = await w.s.database.db.selectFrom('connect_states').selectAll().where('state_hash', '=', hash).executeTakeFirstOrThrow();
  const sealed = { keyId: row.key_id, iv: Buffer.from(row.iv), ciphertext: Buffer.from(row.ciphertext), tag: Buffer.from(row.tag) };
  return w.s.vault.unseal(sealed, binding).toString('utf8');
}
