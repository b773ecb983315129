import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What a stand-in server records: every request in arrival order, and a way to wait for the n-th.
 *
 * @example const arrivals = new Arrivals<Wake>(); ...; await arrivals.waitFor(3)
 */
export class Arrivals<T> {
  readonly received: T[] = [];
  readonly #waiters: { count: number; resolve: () => void }[] = [];

  push(item: T): void {
    this.received.push(item);
    for (const waiter of [...this.#waiters]) if (this.received.length >= waiter.count) waiter.resolve();
  }

  /** Resolves once `count` have arrived in total. */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiters.push({ count, resolve }));
  }
}

/**
 * Listens on a free loopback port; `close` drops open connections (keep-alive, hanging answers) and stops.
 *
 * @example const { port, close } = await listenOnFreePort(createServer(handler))
 */
export async function listenOnFreePort(server: Server): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
