import type { Clock } from '@platform/kit/clock';
import type { UserRow } from '../db/schema.ts';
import type { UsersRepository } from './users.repository.ts';

/** A looked-up row stays this long; every write (here or on another instance, through NOTIFY) drops it sooner. */
const freshMs = 5_000;

/**
 * The user rows the proxy reads on every request, from memory: a row is kept for a few seconds, and dropped as soon as
 * it changes, so a request never waits on the database for a user seen a moment ago and a suspension takes effect at
 * once (on other instances, as soon as their notification arrives).
 */
export class UserDirectory {
  readonly #repository: UsersRepository;
  readonly #clock: Clock;
  readonly #rows = new Map<string, { row: UserRow | undefined; at: number }>();

  constructor(repository: UsersRepository, clock: Clock) {
    this.#repository = repository;
    this.#clock = clock;
  }

  async get(id: string): Promise<UserRow | undefined> {
    const now = this.#clock.now().getTime();
    const cached = this.#rows.get(id);
    if (cached && now - cached.at < freshMs) return cached.row;
    const row = await this.#repository.get(id);
    // Unknown users are not cached: an invite redeemed a moment ago must be seen at once.
    if (row) this.#rows.set(id, { row, at: now });
    return row;
  }

  invalidate(id: string): void {
    this.#rows.delete(id);
  }

  /** After a lost notification (a reconnect), anything may have changed. */
  clear(): void {
    this.#rows.clear();
  }
}
