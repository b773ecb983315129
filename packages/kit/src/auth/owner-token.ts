import { createHmac, createSecretKey, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';

/**
 * Owner tokens: a bearer that names the one owner it may act for, minted from a service's root transport token so
 * that the service can check it without storing anything, and one owner's token opens nobody else's data.
 *
 * `<prefix>.<owner>.<base64url HMAC-SHA256(key, "<prefix>.<owner>")>` with key = HKDF-SHA256(root, salt empty,
 * info `<scheme info>`, 32 bytes). The root itself is never derivable from a token, and the HKDF info keeps the key
 * apart from every other use of the same root. Whoever holds the root (the service, and the one party that hands
 * tokens out: the router, `platform up`) mints; the service verifies in constant time.
 */
export interface OwnerTokenScheme {
  /** The token's first part, which also versions it (`mem1`). */
  readonly prefix: string;
  /** The HKDF info of the MAC key. */
  readonly info: string;
}

/** The memory server's per-user bearers: minted by the router (and `platform up`), verified by the memory server. */
export const memoryOwnerTokens: OwnerTokenScheme = Object.freeze({ prefix: 'mem1', info: 'platform-memory-owner-token-v1' });

/**
 * The per-user bearers of the services that act for a caller-named identity: a token of one of these lets its holder
 * act only as DIDs of its owner (`auth/owner-actor.ts`). One scheme per service, so one service's token opens no other.
 */
export const contractOwnerTokens: OwnerTokenScheme = Object.freeze({ prefix: 'ctr1', info: 'platform-contracts-owner-token-v1' });
export const connectorOwnerTokens: OwnerTokenScheme = Object.freeze({ prefix: 'cnx1', info: 'platform-connector-owner-token-v1' });
export const gatewayOwnerTokens: OwnerTokenScheme = Object.freeze({ prefix: 'gw1', info: 'platform-gateway-owner-token-v1' });
export const schedulerOwnerTokens: OwnerTokenScheme = Object.freeze({ prefix: 'sch1', info: 'platform-scheduler-owner-token-v1' });

/** What an owner may be: a user id as the router and the daemon know it (`DAEMON_USER_ID`). */
export const ownerPattern = /^[A-Za-z0-9._-]{1,128}$/;

export type OwnerTokenCheck = { ok: true; owner: string } | { ok: false; reason: string };

const macPattern = /^[A-Za-z0-9_-]{43}$/;

export class OwnerTokens {
  readonly #scheme: OwnerTokenScheme;
  readonly #key: KeyObject;

  /** @example new OwnerTokens(config.token, memoryOwnerTokens) */
  constructor(root: string, scheme: OwnerTokenScheme) {
    // An empty root would make every owner's token public knowledge.
    if (root === '') throw new Error('owner tokens need a non-empty root token');
    this.#scheme = scheme;
    this.#key = createSecretKey(Buffer.from(hkdfSync('sha256', Buffer.from(root, 'utf8'), Buffer.alloc(0), scheme.info, 32)));
  }

  /** The bearer of one owner. Throws on an owner outside `ownerPattern` (a caller's mistake, never a user's input). */
  mint(owner: string): string {
    if (!ownerPattern.test(owner)) throw new Error(`an owner is 1–128 of A-Z a-z 0-9 . _ -, got "${owner}"`);
    return `${this.#scheme.prefix}.${owner}.${this.#mac(owner).toString('base64url')}`;
  }

  /** Whether a presented bearer looks like one of this scheme's tokens (and so must verify, not be compared to the root). */
  claims(presented: string): boolean {
    return presented.startsWith(`${this.#scheme.prefix}.`);
  }

  /** Checks a presented token: its form, then its MAC in constant time. The owner comes only from a token that verified. */
  verify(presented: string): OwnerTokenCheck {
    if (!this.claims(presented)) return { ok: false, reason: `not a ${this.#scheme.prefix} token` };
    const last = presented.lastIndexOf('.');
    const owner = presented.slice(this.#scheme.prefix.length + 1, last);
    const macPart = presented.slice(last + 1);
    if (!ownerPattern.test(owner)) return { ok: false, reason: 'the token names no valid owner' };
    // Canonical base64url only, so one token has one spelling (Node's decoder ignores stray low bits).
    const presentedMac = Buffer.from(macPart, 'base64url');
    if (!macPattern.test(macPart) || presentedMac.toString('base64url') !== macPart) return { ok: false, reason: 'the token’s MAC is not base64url' };
    if (!timingSafeEqual(presentedMac, this.#mac(owner))) return { ok: false, reason: 'the token’s MAC does not match' };
    return { ok: true, owner };
  }

  #mac(owner: string): Buffer {
    return createHmac('sha256', this.#key).update(`${this.#scheme.prefix}.${owner}`, 'utf8').digest();
  }
}

/**
 * A daemon's per-user bearers: the setting a daemon reads each from, and the scheme its service verifies. Whoever
 * starts daemons (the router, `platform up`) holds each service's root under the same setting name and hands each
 * daemon its own user's token in its place, never the root (which may act as, or read, every user).
 */
export const daemonOwnerTokens: readonly { readonly setting: string; readonly scheme: OwnerTokenScheme }[] = Object.freeze([
  { setting: 'MEMORY_MCP_TOKEN', scheme: memoryOwnerTokens },
  { setting: 'PLATFORM_CONTRACT_TOKEN', scheme: contractOwnerTokens },
  // The daemon does not call the connector itself: its stdio proxy child gets this one (DAEMON_MCP_SERVERS env_pass).
  { setting: 'PLATFORM_CONNECTOR_TOKEN', scheme: connectorOwnerTokens },
  { setting: 'PLATFORM_GATEWAY_TOKEN', scheme: gatewayOwnerTokens },
  { setting: 'SCHEDULER_TOKEN', scheme: schedulerOwnerTokens },
]);

/**
 * Mints one user's daemon bearers from the roots (by setting name); a service whose root is empty or absent gets no
 * token (the daemon then calls it without one, as against an open service).
 *
 * @example daemonOwnerTokenMinter({ MEMORY_MCP_TOKEN: root })(userId) // { MEMORY_MCP_TOKEN: 'mem1.<userId>.<mac>' }
 */
export function daemonOwnerTokenMinter(roots: Readonly<Record<string, string | undefined>>): (owner: string) => Record<string, string> {
  const minters = daemonOwnerTokens.flatMap(({ setting, scheme }) => {
    const root = roots[setting];
    return root === undefined || root === '' ? [] : [{ setting, tokens: new OwnerTokens(root, scheme) }];
  });
  return (owner) => Object.fromEntries(minters.map(({ setting, tokens }) => [setting, tokens.mint(owner)]));
}
