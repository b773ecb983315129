import type { TestEngine } from '@platform/testkit/databases';
import { type GoogleApis, startGoogleApis } from '@platform/testkit/google-apis';
import type { Logger } from 'pino';
import { calendarEvents } from '../src/connectors/workspace/tools/calendar.ts';
import { mailModify } from '../src/connectors/workspace/tools/mail.ts';
import { confirmationDigest } from '../src/invoke/confirmation.ts';
import { type Connector, credentialFor, startConnector } from './harness.ts';

export { calendarEvents, mailModify };
export const connectorId = 'google-workspace';

/** The connector service pointed at a fresh Google stand-in, with helpers to connect a user and invoke tools. */
export async function startWorkspace(engine: TestEngine, options: { logger?: Logger } = {}) {
  const google: GoogleApis = await startGoogleApis({ now: () => new Date('2026-03-01T12:00:00Z') });
  const s: Connector = await startConnector(engine, { providers: { googleApiUrl: google.url, timeoutMs: 5_000 }, ...options });

  /** A new agent whose user connected with `scopes` (the stand-in accepts the access token for `providerScopes`). */
  async function connectedUser(scopes: readonly string[] = [mailModify, calendarEvents], providerScopes: readonly string[] = scopes) {
    const agent = await s.agent();
    const credential = await s.seed(agent.owner, scopes, credentialFor(agent.owner.slice(0, 8)));
    google.grant(credential.accessToken, providerScopes);
    return { ...agent, credential };
  }

  /** POST /v1/invoke; `confirmed` adds the right confirmation for these arguments. */
  function invoke(token: string, tool: string, args: Record<string, unknown>, extra: { confirmed?: boolean; confirm?: unknown } = {}) {
    const confirm = extra.confirmed ? { tool, digest: confirmationDigest(connectorId, tool, args) } : extra.confirm;
    return s.call('POST', '/v1/invoke', { token, body: { connector: connectorId, tool, arguments: args, ...(confirm ? { confirm } : {}) } });
  }

  async function close() {
    await s.close();
    await google.close();
  }

  return { s, google, connectedUser, invoke, close };
}

export type Workspace = Awaited<ReturnType<typeof startWorkspace>>;
