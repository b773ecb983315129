import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { preparedMarker, preparedName } from './prepared-statements.ts';
import { noteDatabaseFailure } from './unavailable.ts';

/**
 * node-postgres's pool as Kysely's PostgreSQL dialect takes it, with every statement sent in node-postgres's callback
 * form, and statements marked with `prepared()` sent under their names (parsed once per connection).
 *
 * Why the callback form: in its promise form (`client.query(text, values)`, what Kysely calls) node-postgres kept each
 * statement's objects (its Query, parameters, row description and result) alive past the young generation's next
 * collection, so they were copied, promoted, and freed only by a full collection. Measured in the gateway at 1,000
 * calls/s: of every 25 MB allocated, 1 MB survived a scavenge against 0.16 MB in the callback form, and the pauses
 * went from 4–6 ms to 1–2 ms (services/gateway/README.md). Why the promise form keeps them was not found.
 *
 * Every failure of a connect or a statement is shown to `noteDatabaseFailure`, so one that means "the database is
 * unavailable" answers 503 with Retry-After (kit `db/unavailable.ts`). `onLostWhileLent` hears a connection that
 * failed while lent out (the pool itself listens only on idle ones; see `wrap`).
 */
export function kyselyPool(pool: pg.Pool, onLostWhileLent: (error: Error) => void): PostgresPool {
  // One wrapper per pooled client: Kysely keeps its connection object per client it is handed.
  const wrappers = new WeakMap<pg.PoolClient, LendableClient>();
  return {
    Client: pg.Client,
    options: pool.options,
    end: () => pool.end(),
    connect: () =>
      new Promise<PostgresPoolClient>((resolve, reject) => {
        pool.connect((error, client) => {
          if (error || !client) {
            reject(error ? noteDatabaseFailure(error) : new Error('the pool gave no client'));
            return;
          }
          let wrapper = wrappers.get(client);
          if (!wrapper) {
            wrapper = wrap(client, onLostWhileLent);
            wrappers.set(client, wrapper);
          }
          wrapper.lent = true;
          resolve(wrapper);
        });
      }),
  };
}

/** Kysely's view of a pooled client, and whether it is handed out (between the pool's connect and its release). */
interface LendableClient extends PostgresPoolClient {
  lent: boolean;
}

function wrap(client: pg.PoolClient, onLostWhileLent: (error: Error) => void): LendableClient {
  function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(statement: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Cursors are Kysely's stream(), which needs a cursor class the kit does not configure: nothing sends one.
    if (typeof statement !== 'string') throw new Error('streaming query results is not configured');
    // Kysely hands over a copy of its parameters already; node-postgres reads them and keeps nothing.
    const values = parameters as unknown[];
    const name = statement.startsWith(preparedMarker) ? preparedName(statement) : undefined;
    const config: pg.QueryConfig = name === undefined ? { text: statement, values } : { name, text: statement, values };
    return new Promise<PostgresQueryResult<R>>((resolve, reject) => {
      client.query(config, (error: Error | null, result: pg.QueryResult) => {
        if (error) reject(noteDatabaseFailure(error));
        else resolve(result as unknown as PostgresQueryResult<R>);
      });
    });
  }
  const wrapper: LendableClient = {
    lent: false,
    query,
    release: (destroy?: boolean) => {
      wrapper.lent = false;
      client.release(destroy);
    },
    // Read when Kysely cancels a statement (an aborted query): the backend this client talks to.
    get processID() {
      return (client as unknown as { processID?: number }).processID;
    },
  };
  // Once per connection. node-postgres's pool listens for 'error' only on idle clients, and a client whose backend
  // ended while lent out (`pg_terminate_backend`, a restart, a failover: 57P01 between statements, "Connection
  // terminated unexpectedly" after one) emitted 'error' with no listener, which ended the process. The statement
  // running gets the error too, the next one "not queryable", and the pool drops the client when it comes back; an
  // idle client's failure is the pool's to report.
  let lost = false;
  client.on('error', (error) => {
    // Once: a backend that ends says so (57P01), then its socket closes ("terminated unexpectedly").
    if (wrapper.lent && !lost) onLostWhileLent(error);
    lost = true;
  });
  return wrapper;
}
