import { join } from 'node:path';
import { canonicalDid, type ParsedDid, parseDid } from '@platform/kit/auth/did';
import { publicKeyFromHex, verifyMessage } from '@platform/kit/auth/ed25519';
import { wakeKeyMessage } from '@platform/kit/auth/wake-key-message';
import type { Clock } from '@platform/kit/clock';
import { invalidRequest, ServiceError } from '@platform/kit/errors';
import { readJsonFile, writeFileDurably } from '../files/durable-files.ts';

/** A key the user linked with this agent: alarms it makes on the scheduler wake the agent as its own do. */
export interface WakeKey {
  did: string;
  public_key: string;
  linked_at: string;
}

/** Enough for a person's CLI on a few machines; more is a mistake, or someone linking keys in a loop. */
export const wakeKeyLimit = 32;

/**
 * The keys whose wakes this daemon accepts beside its own DID (`DATA_DIR/wake-keys.json`, written durably). Its user
 * links one with a signature by that key over `wakeKeyMessage` (proof the linker holds it, bound to this agent); the
 * bearer that reaches the daemon is the user's (the router checked their token), and the DID must be that user's.
 * Only public keys are stored: no private key leaves the machine it was made on.
 */
export class WakeKeys {
  readonly #path: string;
  readonly #clock: Clock;
  readonly #keys = new Map<string, WakeKey>();
  // One write at a time: two links at once must not each write a file without the other's key.
  #writing: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string, clock: Clock) {
    this.#path = join(dataDir, 'wake-keys.json');
    this.#clock = clock;
  }

  async init(): Promise<void> {
    const file = await readJsonFile<{ keys?: WakeKey[] }>(this.#path);
    for (const key of file?.keys ?? []) {
      const parsed = parseDid(key.did);
      if (parsed !== undefined) this.#keys.set(canonicalDid(parsed), key);
    }
  }

  list(): WakeKey[] {
    return [...this.#keys.values()];
  }

  /** Whether wakes for this DID (any spelling) are accepted as this agent's. */
  has(did: string): boolean {
    const parsed = parseDid(did);
    return parsed !== undefined && this.#keys.has(canonicalDid(parsed));
  }

  /**
   * Links a key after checking it: a well-formed DID of this agent's user, not the agent's own, the public key its
   * fingerprint names, and its signature over the link text. Linking it again changes nothing (`created: false`).
   */
  async link(
    agent: { did: string; userId: string },
    request: { did: string; public_key: string; signature: string },
  ): Promise<{ key: WakeKey; created: boolean }> {
    const parsed = checkedKeyDid(agent, request.did);
    const known = this.#keys.get(canonicalDid(parsed));
    const publicKey = request.public_key.toLowerCase();
    if (!publicKey.startsWith(parsed.keyFingerprint.toLowerCase()))
      throw invalidRequest('public_key does not match the key fingerprint in the DID', { field: 'public_key' });
    const key = publicKeyFromHex(publicKey);
    if (key === undefined) throw invalidRequest('public_key must be a 32-byte ed25519 public key in hex', { field: 'public_key' });
    if (!verifyMessage(key, wakeKeyMessage(agent.did, request.did), request.signature))
      throw new ServiceError('unauthorized', `signature does not verify: sign "${wakeKeyMessage(agent.did, request.did)}" with the key`);
    if (known !== undefined) return { key: known, created: false };
    if (this.#keys.size >= wakeKeyLimit) throw new ServiceError('conflict', `at most ${wakeKeyLimit} keys can be linked; unlink one first`);
    const linked: WakeKey = { did: request.did, public_key: publicKey, linked_at: this.#clock.now().toISOString() };
    await this.#write(() => this.#keys.set(canonicalDid(parsed), linked));
    return { key: linked, created: true };
  }

  /** Unlinks a key; false when it was not linked. */
  async unlink(agent: { did: string; userId: string }, did: string): Promise<boolean> {
    const id = canonicalDid(checkedKeyDid(agent, did));
    if (!this.#keys.has(id)) return false;
    await this.#write(() => this.#keys.delete(id));
    return true;
  }

  /** Applies a change and writes the whole list; the change is undone when the write fails (nothing half-done). */
  async #write(change: () => unknown): Promise<void> {
    const run = this.#writing.then(async () => {
      const before = new Map(this.#keys);
      change();
      try {
        await writeFileDurably(this.#path, `${JSON.stringify({ version: 1, keys: this.list() }, null, 2)}\n`);
      } catch (error) {
        this.#keys.clear();
        for (const [id, key] of before) this.#keys.set(id, key);
        throw error;
      }
    });
    this.#writing = run.catch(() => undefined);
    await run;
  }
}

function checkedKeyDid(agent: { did: string; userId: string }, did: string): ParsedDid {
  const parsed = parseDid(did);
  if (parsed === undefined) throw invalidRequest('did must be an agent DID, did:platform:<user id>:<16 hex>', { field: 'did' });
  if (parsed.owner !== parseDid(agent.did)?.owner)
    throw new ServiceError('forbidden', `${did} is a key of another user: this agent serves user ${agent.userId}`);
  if (canonicalDid(parsed) === canonicalDid(parseDid(agent.did) as ParsedDid))
    throw new ServiceError('conflict', 'that is this agent’s own DID; its wakes are accepted');
  return parsed;
}
