import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { type JsonClient, JsonClientError } from '@platform/kit/http/json-client';

/** Loopback, private, link-local, carrier-grade NAT, unspecified and unique-local ranges, IPv4 and IPv6. */
const privateRanges = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  privateRanges.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  privateRanges.addSubnet(network, prefix, 'ipv6');

/** Whether an IP literal is one a public service must never be made to call. IPv4-mapped IPv6 counts as its IPv4. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return privateRanges.check(mapped[1] as string, 'ipv4');
  const family = isIP(address);
  if (family === 4) return privateRanges.check(address, 'ipv4');
  if (family === 6) return privateRanges.check(address, 'ipv6');
  return false;
}

/**
 * Resolves a provider's host for one connection and refuses private addresses unless allowed: the address that
 * was checked is the one connected to, so a name that resolves elsewhere a moment later (DNS rebinding) changes
 * nothing. For node:http's `lookup` option.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  const guarded = (
    hostname: string,
    options: { all?: boolean; family?: number },
    callback: (error: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void,
  ): void => {
    lookup(hostname, { all: true }).then(
      (addresses) => {
        const refused = addresses.find((entry) => isPrivateAddress(entry.address));
        if (refused && !allowPrivate) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${refused.address}, a private address the marketplace does not call`);
          error.code = 'EPRIVATEADDRESS';
          callback(error, '');
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, (addresses[0] as { address: string }).address, (addresses[0] as { family: number }).family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
  return guarded as unknown as LookupFunction;
}

/**
 * A client whose requests refuse private addresses unless allowed: names through `guardedLookup` on connect, and
 * IP literals here (node connects to a literal without any lookup, so the guard would never see it).
 */
export function guardedClient(client: JsonClient, allowPrivate: boolean): JsonClient {
  if (allowPrivate) return client;
  return {
    ...client,
    request(method, url, init) {
      const target = typeof url === 'string' ? new URL(url) : url;
      const host = target.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0 && isPrivateAddress(host))
        return Promise.reject(new JsonClientError('network', `${host} is a private address the marketplace does not call`));
      return client.request(method, url, init);
    },
  };
}
