/**
 * `derive` with its answers remembered by argument, at most `max` of them (least recently used first out): for a
 * pure function of a key on a hot path, such as the router's HMAC of a user's daemon bearer on every proxied request.
 *
 * @example const bearerOf = remembered(daemonTokenFor(root), 10_000); bearerOf(userId)
 */
export function remembered<T>(derive: (key: string) => T, max: number): (key: string) => T {
  const answers = new Map<string, T>();
  return (key) => {
    if (answers.has(key)) {
      const known = answers.get(key) as T;
      // Re-inserted so the map's order stays least recently used first.
      answers.delete(key);
      answers.set(key, known);
      return known;
    }
    const answer = derive(key);
    answers.set(key, answer);
    if (answers.size > max) answers.delete(answers.keys().next().value as string);
    return answer;
  };
}
