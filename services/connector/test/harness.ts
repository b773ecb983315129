import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { type AgentKey, generateAgentKey } from '@platform/client/agent-key';
import { migrate } from '@platform/kit/db/migrate';
import { type Database, openDatabase } from '@platform/kit/db/open-database';
import type { ServiceMetrics } from '@platform/kit/observability/metrics';
import { silentLogger, type TestEngine } from '@platform/testkit/databases';
import { Arrivals } from '@platform/testkit/local-server';
import { ManualClock } from '@platform/testkit/manual-clock';
import { type RawBuilder, sql } from 'kysely';
import pino, { type Logger } from 'pino';
import { buildApp, principalHeader } from '../src/app.ts';
import { ConnectionsRepository } from '../src/connections/connections.repository.ts';
import type { Credential } from '../src/connections/credential.ts';
import { Resealer } from '../src/connections/reseal.ts';
import type { ConnectorDefinition, ProviderSettings } from '../src/connectors/types.ts';
import { migrations } from '../src/db/migrations.ts';
import type { ConnectorSchema } from '../src/db/schema.ts';
import type { OAuthSettings } from '../src/oauth/settings.ts';
import type { Keyring } from '../src/vault/keyring.ts';
import { Vault } from '../src/vault/vault.ts';

export const transportToken = 'test-transport-token';
export const agentAuthSecret = 'test-agent-auth-secret';
export const startTime = '2026-03-01T12:00:00.000Z';
/** The sub-millisecond digits of the test clock's SQL time (see WatchedClock). */
const sqlMicroseconds = '417';

/** A keyring of fresh random keys; the first id is current unless `current` says otherwise. */
export function keyringOf(ids: readonly string[], current = ids[0] as string, keys = new Map<string, Buffer>()): Keyring {
  for (const id of ids) if (!keys.has(id)) keys.set(id, randomBytes(32));
  return { currentId: current, keys: new Map(ids.map((id) => [id, keys.get(id) as Buffer])) };
}

/** A credential whose tokens are unique, so a test can search any output for them. */
export function credentialFor(label: string): Credential {
  return {
    accessToken: `ya29.access-${label}-${randomBytes(8).toString('hex')}`,
    refreshToken: `1//refresh-${label}-${randomBytes(8).toString('hex')}`,
    expiresAt: new Date('2026-03-01T13:00:00.000Z'),
  };
}

/**
 * A manual clock that also reports each sleep begun, so a test can wait until an instance is waiting on it. Its SQL
 * time carries microseconds, as PostgreSQL's `now()` does: a timestamp read back into a JavaScript date (milliseconds)
 * then no longer equals the stored one, so code comparing the two fails here as it does in production.
 */
export class WatchedClock extends ManualClock {
  readonly sleeps = new Arrivals<number>();
  override sqlNow(): RawBuilder<Date> {
    return sql<Date>`${this.now().toISOString().replace('Z', `${sqlMicroseconds}Z`)}::timestamptz`;
  }
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const slept = super.sleep(ms, signal);
    this.sleeps.push(ms);
    return slept;
  }
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Transport bearer; defaults to the right one, null sends none. */
  bearer?: string | null;
}

/** One connector service on a fresh database with a manual clock; `withKeys` gives repositories over other keyrings. */
export async function startConnector(
  engine: TestEngine,
  options: {
    keyring?: Keyring;
    providers?: ProviderSettings;
    oauth?: OAuthSettings;
    logger?: Logger;
    connectors?: readonly ConnectorDefinition[];
    /** The service's metrics (the database's too), served at /metrics behind `metricsToken`. */
    metrics?: { metrics: ServiceMetrics; metricsToken: string };
  } = {},
) {
  const fresh = await engine.fresh();
  const database: Database<ConnectorSchema> = await openDatabase<ConnectorSchema>({
    ...fresh.options,
    ...(options.metrics && { metrics: options.metrics.metrics }),
  });
  await migrate(database, 'connector', migrations);
  const clock = new WatchedClock(startTime);
  const vault = new Vault(options.keyring ?? keyringOf(['k1']));
  /** One instance of the service on this database (the tests' main one, or a sibling as a second process would be). */
  async function instance(instanceVault = vault) {
    const built = buildApp({
      db: database.db,
      ping: () => database.ping(),
      clock,
      logger: options.logger ?? silentLogger,
      vault: instanceVault,
      transportToken,
      agentAuthSecret,
      ...(options.providers ? { providers: options.providers } : {}),
      ...(options.oauth ? { oauth: options.oauth } : {}),
      ...(options.connectors ? { connectors: options.connectors } : {}),
      ...options.metrics,
    });
    await built.ready();
    return built;
  }
  const app = await instance();
  const siblings: Awaited<ReturnType<typeof instance>>[] = [];
  const repository = new ConnectionsRepository(database.db, vault, clock);

  /** A repository and re-sealer as an instance configured with `keyring` would have them, on the same database. */
  function withKeys(keyring: Keyring, batchSize = 100) {
    const otherVault = new Vault(keyring);
    const otherRepository = new ConnectionsRepository(database.db, otherVault, clock);
    return {
      vault: otherVault,
      repository: otherRepository,
      resealer: new Resealer({ repository: otherRepository, vault: otherVault, batchSize, logger: silentLogger }),
    };
  }

  function caller(target: typeof app) {
    return async (method: 'GET' | 'POST', url: string, callOptions: CallOptions = {}) => {
      const headers: Record<string, string> = {};
      const presented = callOptions.bearer === undefined ? transportToken : callOptions.bearer;
      if (presented) headers.authorization = `Bearer ${presented}`;
      if (callOptions.token !== undefined) headers[principalHeader.toLowerCase()] = callOptions.token;
      const response = await target.inject({ method, url, headers, ...(callOptions.body === undefined ? {} : { payload: callOptions.body as object }) });
      const json = (response.headers['content-type'] ?? '').toString().startsWith('application/json');
      return {
        status: response.statusCode,
        text: response.body,
        headers: response.headers,
        // biome-ignore lint/suspicious/noExplicitAny: tests read whichever route's data shape they called.
        body: (json ? response.json() : {}) as { ok: boolean; data?: any; error?: { code: string; message: string; retryable: boolean } },
      };
    };
  }
  const call = caller(app);

  /** A second instance of the service on the same database, clock and keys: another process, as far as the data goes. */
  async function sibling() {
    const other = await instance();
    siblings.push(other);
    return { app: other, call: caller(other) };
  }

  /** Another instance with its own keys and re-sealer, as a process started with another CONNECTOR_VAULT_KEYS; `stop` ends it. */
  async function instanceWith(keyring: Keyring) {
    const keys = withKeys(keyring);
    const other = await instance(keys.vault);
    siblings.push(other);
    async function stop() {
      siblings.splice(siblings.indexOf(other), 1);
      await other.close();
    }
    return { ...keys, app: other, call: caller(other), stop };
  }

  /** Runs the handshake for a key (a new one by default) and returns it with its principal token and owner. */
  async function agent(key: AgentKey = generateAgentKey()): Promise<{ key: AgentKey; token: string; owner: string }> {
    const challenge = await call('POST', '/v1/agent/auth/challenge', { body: { did: key.did } });
    const verify = await call('POST', '/v1/agent/auth/verify', {
      body: { did: key.did, public_key: key.publicKeyHex, nonce: challenge.body.data.nonce, signature: key.sign(challenge.body.data.message) },
    });
    if (verify.status !== 200) throw new Error(`handshake failed: ${JSON.stringify(verify.body)}`);
    return { key, token: verify.body.data.token as string, owner: verify.body.data.owner_user_id as string };
  }

  /** Seeds a connection the way the connect flow will store one: through the repository, so the credential is sealed. */
  async function seed(owner: string, scopes: readonly string[], credential: Credential = credentialFor(owner), connector = 'google-workspace') {
    await repository.save(owner, connector, scopes, credential);
    return credential;
  }

  async function close() {
    for (const other of siblings) await other.close();
    await app.close();
    await database.close();
    await fresh.dispose();
  }

  return { app, clock, database, vault, repository, withKeys, call, sibling, instanceWith, agent, seed, close };
}

export type Connector = Awaited<ReturnType<typeof startConnector>>;

/** A logger at trace level writing into memory, so a test can search everything the service logged. */
export function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), text: () => lines.join('') };
}
