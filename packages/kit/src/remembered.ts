/**
 * `derive` with its answers remembered by argument, for a pure function of a key on a hot path, such as the router's
 * HMAC of a user's daemon bearer on every proxied request. Two generations of at most `max` answers each: answers go
 * to the young one, and when it holds `max` it becomes the old one (the old one is dropped); an answer found in the
 * old one moves to the young one. So an answer asked for again before two generations fill stays, at most 2 × `max`
 * are held, and a hit in the young generation changes nothing.
 *
 * Not a map kept in least-recently-used order: re-inserting each hit (delete, then set) made V8 rebuild the map's
 * table every few hits, a new table each time referenced from a long-lived map, so it outlived young-generation
 * collections and filled the old generation (in the gateway at 3,000 calls/s, about a twentieth of what reached the old
 * generation, from `safeEqual`'s map of digests; the router's two maps of 10,000 users were rebuilt the same way).
 *
 * @example const bearerOf = remembered(daemonTokenFor(root), 10_000); bearerOf(userId)
 */
export function remembered<T>(derive: (key: string) => T, max: number): (key: string) => T {
  let young = new Map<string, T>();
  let old = new Map<string, T>();
  const keep = (key: string, answer: T) => {
    young.set(key, answer);
    if (young.size >= max) {
      old = young;
      young = new Map();
    }
    return answer;
  };
  return (key) => {
    // One lookup a generation; `has` only for an answer that is undefined.
    const recent = young.get(key);
    if (recent !== undefined || young.has(key)) return recent as T;
    const earlier = old.get(key);
    return keep(key, earlier !== undefined || old.has(key) ? (earlier as T) : derive(key));
  };
}
