import pg from 'pg';
import type { Logger } from 'pino';

type Handler = (payload: string) => void;

/**
 * LISTEN on a dedicated PostgreSQL connection (a pooled one would be handed to other queries).
 * When the connection drops it reconnects and listens again; callers must not rely on every
 * notification arriving (they are wake-up hints, never the source of truth).
 */
export class PostgresListener {
  readonly #config: pg.ClientConfig;
  readonly #logger: Logger;
  readonly #handlers = new Map<string, Set<Handler>>();
  #client: pg.Client | undefined;
  #connecting: Promise<pg.Client> | undefined;
  #closed = false;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(config: pg.ClientConfig, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
  }

  async listen(channel: string, handler: Handler): Promise<() => Promise<void>> {
    let handlers = this.#handlers.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.#handlers.set(channel, handlers);
      const client = await this.#connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    }
    handlers.add(handler);
    return async () => {
      handlers.delete(handler);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  #connect(): Promise<pg.Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<pg.Client> {
    const client = new pg.Client(this.#config);
    client.on('notification', (message) => {
      for (const handler of this.#handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    await client.connect();
    this.#client = client;
    return client;
  }

  #lost(client: pg.Client, error: Error): void {
    if (this.#client !== client || this.#closed) return;
    this.#client = undefined;
    this.#logger.warn({ err: error }, 'notification connection lost; reconnecting');
    this.#retryTimer = setTimeout(() => void this.#relisten(), 1000);
  }

  async #relisten(): Promise<void> {
    if (this.#closed) return;
    try {
      const client = await this.#connect();
      for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      // Anything may have been missed while disconnected: tell every handler to look again.
      for (const handlers of this.#handlers.values()) for (const handler of handlers) handler('');
    } catch (error) {
      this.#logger.warn({ err: error }, 'notification connection still down; retrying');
      this.#client = undefined;
      this.#retryTimer = setTimeout(() => void this.#relisten(), 1000);
    }
  }
}
