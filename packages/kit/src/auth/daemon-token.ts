import { createHmac } from 'node:crypto';

/**
 * Each daemon's bearer: an HMAC of the root (`PLATFORM_DAEMON_TOKEN` as the router holds it) and the user id, so one
 * user's daemon token opens no other daemon and the root never leaves whoever starts daemons. In the kit because the
 * router (its daemons) and `platform up` (the daemon it runs itself, and `platform secret`) must derive it alike.
 *
 * @example const bearer = daemonTokenFor(root)(userId)
 */
export function daemonTokenFor(root: string): (userId: string) => string {
  // An empty root would make every user's bearer public knowledge.
  if (root === '') throw new Error('daemon tokens need a non-empty root');
  return (userId) => createHmac('sha256', root).update(`platform-daemon-token:${userId}`).digest('base64url');
}
