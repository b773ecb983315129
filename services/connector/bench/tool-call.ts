/*
 * A tool call through the connector service (HTTP in, principal token checked, connection read, credential
 * unsealed, the provider called, the scoped result out) against the same call made straight to the provider:
 * the Google stand-in's Calendar events list, over keep-alive HTTP with the kit JSON client on both paths.
 * Sequential calls, the two paths alternating in slices so neither gets a quieter machine.
 */
import { performance } from 'node:perf_hooks';
import { generateAgentKey } from '@platform/client/agent-key';
import { deriveTokenKey, mintPrincipalToken } from '@platform/kit/auth/principal-token';
import { systemClock, unixSeconds } from '@platform/kit/clock';
import { migrate } from '@platform/kit/db/migrate';
import { openDatabase } from '@platform/kit/db/open-database';
import { createJsonClient } from '@platform/kit/http/json-client';
import { silentLogger } from '@platform/testkit/databases';
import { calendarEventsScope, startGoogleApis } from '@platform/testkit/google-apis';
import { p50, p99 } from '@platform/testkit/stats';
import { buildApp, principalHeader } from '../src/app.ts';
import { ConnectionsRepository } from '../src/connections/connections.repository.ts';
import { migrations } from '../src/db/migrations.ts';
import type { ConnectorSchema } from '../src/db/schema.ts';
import type { Vault } from '../src/vault/vault.ts';

export async function benchToolCalls(vault: Vault, calls: number) {
  const google = await startGoogleApis();
  for (let i = 0; i < 5; i++) {
    const start = new Date(Date.UTC(2026, 2, 2, 9 + i));
    google.addEvent('primary', {
      summary: `Event ${i}`,
      start: { dateTime: start.toISOString() },
      end: { dateTime: new Date(start.getTime() + 1_800_000).toISOString() },
    });
  }
  const database = await openDatabase<ConnectorSchema>({ logger: silentLogger });
  await migrate(database, 'connector', migrations);
  const app = buildApp({
    db: database.db,
    ping: () => database.ping(),
    clock: systemClock,
    logger: silentLogger,
    vault,
    transportToken: 'bench-transport',
    agentAuthSecret: 'bench-secret',
    providers: { googleApiUrl: google.url, timeoutMs: 10_000 },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const key = generateAgentKey();
  const owner = key.did.split(':')[2] as string;
  const principal = mintPrincipalToken(deriveTokenKey('bench-secret', 'connector'), { did: key.did, owner, expiresAt: unixSeconds(new Date()) + 3600 });
  const accessToken = 'ya29.bench-access-token';
  google.grant(accessToken, [calendarEventsScope]);
  await new ConnectionsRepository(database.db, vault, systemClock).save(owner, 'google-workspace', [calendarEventsScope], {
    accessToken,
    refreshToken: '1//bench-refresh',
    expiresAt: new Date(Date.now() + 3_600_000),
  });

  const client = createJsonClient({ maxSockets: 4, timeoutMs: 10_000 });
  const query = '?maxResults=25&singleEvents=true&orderBy=startTime';
  const direct = async () => {
    const answer = await client.request('GET', `${google.url}/calendar/v3/calendars/primary/events${query}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    if (answer.status !== 200) throw new Error(`direct call answered ${answer.status}`);
  };
  const body = { connector: 'google-workspace', tool: 'calendar_list', arguments: {} };
  const headers = { authorization: 'Bearer bench-transport', [principalHeader]: principal };
  const through = async () => {
    const answer = await client.request('POST', `${url}/v1/invoke`, { headers, body });
    if (answer.status !== 200) throw new Error(`service answered ${answer.status}: ${answer.text}`);
  };

  const timings = { direct: [] as number[], through: [] as number[] };
  const elapsed = { direct: 0, through: 0 };
  for (let i = 0; i < 200; i++) {
    await direct();
    await through();
  }
  const slices = 10;
  for (let slice = 0; slice < slices; slice++) {
    for (const [name, fn] of [
      ['direct', direct],
      ['through', through],
    ] as const) {
      const sliceStart = performance.now();
      for (let i = 0; i < calls / slices; i++) {
        const start = performance.now();
        await fn();
        timings[name].push(performance.now() - start);
      }
      elapsed[name] += performance.now() - sliceStart;
    }
  }
  await client.close();
  await app.close();
  await database.close();
  await google.close();
  const rate = (name: 'direct' | 'through') => timings[name].length / (elapsed[name] / 1000);
  return {
    direct: { perSecond: rate('direct'), p50: p50(timings.direct), p99: p99(timings.direct) },
    through: { perSecond: rate('through'), p50: p50(timings.through), p99: p99(timings.through) },
  };
}
