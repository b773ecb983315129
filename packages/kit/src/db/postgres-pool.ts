import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { preparedMarker, preparedName } from './prepared-statements.ts';

/**
 * node-postgres's pool as Kysely's PostgreSQL dialect takes it, with every statement sent in node-postgres's callback
 * form, and statements marked with `prepared()` sent under their names (parsed once per connection).
 *
 * Why the callback form: in its promise form (`client.query(text, values)`, what Kysely calls) node-postgres kept each
 * statement's objects (its Query, parameters, row description and result) alive past the young generation's next
 * collection, so they were copied, promoted, and freed only by a full collection. Measured in the gateway at 1,000
 * calls/s: of every 25 MB allocated, 1 MB survived a scavenge against 0.16 MB in the callback form, and the pauses
 * went from 4–6 ms to 1–2 ms (services/gateway/README.md). Why the promise form keeps them was not found.
 */
export function kyselyPool(pool: pg.Pool): PostgresPool {
  // One wrapper per pooled client: Kysely keeps its connection object per client it is handed.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    Client: pg.Client,
    options: pool.options,
    end: () => pool.end(),
    connect: () =>
      new Promise<PostgresPoolClient>((resolve, reject) => {
        pool.connect((error, client) => {
          if (error || !client) {
            reject(error ?? new Error('the pool gave no client'));
            return;
          }
          let wrapper = wrappers.get(client);
          if (!wrapper) {
            wrapper = wrap(client);
            wrappers.set(client, wrapper);
          }
          resolve(wrapper);
        });
      }),
  };
}

function wrap(client: pg.PoolClient): PostgresPoolClient {
  // The pool listens for a client's failure only while the client is idle in it. A checked-out client (a statement
  // running, or a session held for long, as settlement's sequencer holds its lock) whose backend ends (a restart, a
  // failover, pg_terminate_backend) would emit 'error' with nobody listening, which ends the process. Its statement
  // fails with the error anyway, later ones fail at once, and the pool drops the client when it is released.
  client.on('error', ignoreConnectionError);
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
        if (error) reject(error);
        else resolve(result as unknown as PostgresQueryResult<R>);
      });
    });
  }
  return {
    query,
    release: (destroy?: boolean) => client.release(destroy),
    // Read when Kysely cancels a statement (an aborted query): the backend this client talks to.
    get processID() {
      return (client as unknown as { processID?: number }).processID;
    },
  };
}

/** See wrap: the failure reaches whoever uses the client through its statements. */
function ignoreConnectionError(): void {}
