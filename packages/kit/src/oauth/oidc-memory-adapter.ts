type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number; exp?: number };

/** Past this many entries an upsert first drops the expired ones, so a long `platform up` does not grow without end. */
const sweepAbove = 1_000;

/**
 * oidc-provider's storage, in memory, one per provider (its built-in one is shared by every provider in the process
 * and warns at each start). Expiry is the provider's to check: it reads `exp` from the payload. Nothing here needs to
 * outlive the process: the tokens the development provider issues are JWTs, checked against its persisted keys.
 */
export function memoryAdapter() {
  const store = new Map<string, Payload>();
  return class MemoryAdapter {
    readonly #name: string;
    constructor(name: string) {
      this.#name = name;
    }
    #key(id: string) {
      return `${this.#name}:${id}`;
    }
    async upsert(id: string, payload: Payload) {
      if (store.size > sweepAbove) {
        const now = Date.now() / 1000;
        for (const [key, stored] of store) if (stored.exp !== undefined && stored.exp < now) store.delete(key);
      }
      store.set(this.#key(id), payload);
    }
    async find(id: string) {
      return store.get(this.#key(id));
    }
    async findByUid(uid: string) {
      return [...store.entries()].find(([key, payload]) => key.startsWith(`${this.#name}:`) && payload.uid === uid)?.[1];
    }
    async findByUserCode(userCode: string) {
      return [...store.entries()].find(([key, payload]) => key.startsWith(`${this.#name}:`) && payload.userCode === userCode)?.[1];
    }
    async consume(id: string) {
      const payload = store.get(this.#key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.#key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, payload] of store) if (payload.grantId === grantId) store.delete(key);
    }
  };
}
