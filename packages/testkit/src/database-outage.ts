import { createConnection, createServer, type Socket } from 'node:net';
import pg from 'pg';
import { postgresAt, type TestEngine } from './databases.ts';

/** Which sessions belong to a service: those of its schema (the kit names them after it) or of its whole database. */
export type BackendsOf = { schema: string } | { database: string };

/**
 * Terminates every PostgreSQL backend of a service, as a restart or a failover does to its sessions (each gets
 * 57P01 "terminating connection due to administrator command"), and waits until they are gone. On a shared database
 * a service's sessions are told by their `application_name`, which the kit sets to the service's schema, so the
 * other services and tests on it keep theirs. Returns how many were ended.
 *
 * @example await terminateBackends(process.env.TEST_DATABASE_URL, { schema: fresh.options.schema })
 */
export async function terminateBackends(adminUrl: string, of: BackendsOf): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const [column, value] = 'schema' in of ? ['application_name', of.schema] : ['datname', of.database];
    const { rows } = await client.query<{ ended: boolean }>(
      `select pg_terminate_backend(pid, 5000) as ended from pg_stat_activity where ${column} = $1 and pid <> pg_backend_pid()`,
      [value],
    );
    return rows.filter((row) => row.ended).length;
  } finally {
    await client.end();
  }
}

/**
 * A TCP relay in front of PostgreSQL: services connect through `url`, and `refuse()` makes every new connection fail
 * (accepted, then closed at once, as a server that is going away does) while the open ones carry on, until
 * `restore()`. Together with `terminateBackends` it is a database that cannot be reached for as long as a test needs.
 */
export interface DatabaseLink {
  /** `target` with its host and port replaced by the relay's. */
  via(target: string): string;
  refuse(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startDatabaseLink(target: string): Promise<DatabaseLink> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let refusing = false;
  const server = createServer((client) => {
    if (refusing) return void client.destroy();
    const server = createConnection({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    for (const [from, to] of [
      [client, server],
      [server, client],
    ] as const) {
      sockets.add(from);
      from.pipe(to);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    via(url) {
      const relayed = new URL(url);
      relayed.hostname = '127.0.0.1';
      relayed.port = String(port);
      return relayed.toString();
    },
    refuse() {
      refusing = true;
    },
    restore() {
      refusing = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The database of a service going away and coming back. */
export interface DatabaseOutage {
  /** New connections are refused, then every backend of the service is terminated (each gets 57P01). */
  begin(): Promise<void>;
  /** The database takes connections again. */
  end(): void;
}

/** An outage of `of`'s sessions behind `link`. */
export function outageOf(link: DatabaseLink, adminUrl: string, of: () => BackendsOf[]): DatabaseOutage {
  return {
    async begin() {
      link.refuse();
      for (const backends of of()) await terminateBackends(adminUrl, backends);
    },
    end: () => link.restore(),
  };
}

/**
 * Real PostgreSQL (TEST_DATABASE_URL) reached through a `DatabaseLink`: a fresh schema per `fresh()`, as
 * `testEngines()` gives, and an outage of every schema it made. Undefined without TEST_DATABASE_URL.
 *
 * @example const behind = await postgresBehindLink(); const scheduler = await startScheduler(behind.engine); await behind.outage.begin()
 */
export async function postgresBehindLink(): Promise<{ engine: TestEngine; outage: DatabaseOutage; close: () => Promise<void> } | undefined> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return undefined;
  const link = await startDatabaseLink(adminUrl);
  const schemas: string[] = [];
  const engine = postgresAt(adminUrl, { connectUrl: link.via(adminUrl), made: (schema) => schemas.push(schema) });
  const outage = outageOf(link, adminUrl, () => schemas.map((schema) => ({ schema })));
  return { engine, outage, close: () => link.close() };
}
