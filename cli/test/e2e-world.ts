import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaemonClient } from '@platform/client/daemon-client';
import { type Approver, delegate } from '@platform/client/delegate';
import { freePort } from '@platform/kit/free-port';
import { calendarEventsScope, type GoogleApis, gmailModify, startGoogleApis } from '@platform/testkit/google-apis';
import { publishListing, startTranslator } from '@platform/testkit/marketplace-listing';
import { type OAuthServer, startOAuthServer } from '@platform/testkit/oauth-server';
import { type RunningPlatform, startPlatform } from '@platform/testkit/platform-up';
import type { CommandRun } from '@platform/testkit/run-command';
import { type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';

/*
 * What the end-to-end flows share: `platform up` as a child process, wired through its documented settings to the
 * stand-ins a test starts for what cannot be reached from here (a model provider behind the real gateway, Google's
 * OAuth server and APIs, a marketplace provider), and the development user talking to the router with their token.
 */

const clientId = 'e2e-google-client';
const clientSecret = 'e2e-google-client-secret-0123456789abcdef';

export interface World {
  platform: RunningPlatform;
  model: ScriptedModel;
  oauth: OAuthServer;
  google: GoogleApis;
  translator: Awaited<ReturnType<typeof startTranslator>>;
  /** The translator's listing, published by a developer through the marketplace's API. */
  serviceId: string;
  /** The development user's daemon, through the router's public URL with their token. */
  alice: DaemonClient & { did: string; userId: string };
  /** The development user's token for the router (an hour). */
  token: string;
  /** Runs `platform <args>` as a second user holding an agent key file of their own. */
  bob(args: readonly string[]): Promise<CommandRun>;
  bobDid: string;
  /** Hands prose to Alice's daemon, approving every gate; resolves with the intent id, the answer and the gates asked. */
  delegate(prose: string): Promise<{ intentId: string; answer: string; gates: string[] }>;
  /** Every file of Alice's daemon volume (data, journal, its log), as text: what the daemon ever saw. */
  aliceVolume(): string;
  close(): Promise<void>;
}

/** Starts the stand-ins, `platform up` on them (PGlite, or PostgreSQL next to `postgresAdminUrl`), and the two users. */
export async function startWorld(options: { postgresAdminUrl?: string } = {}): Promise<World> {
  const model = await startScriptedModel();
  // The connector's port is fixed before it starts: the OAuth server must know the callback it redirects to.
  const connectorPort = await freePort();
  const oauth = await startOAuthServer({
    clientId,
    clientSecret,
    redirectUri: `http://127.0.0.1:${connectorPort}/v1/connect/callback`,
    scopes: [gmailModify, calendarEventsScope],
  });
  const google = await startGoogleApis({ tokenScopes: (token) => oauth.scopesOf(token) });
  const translator = await startTranslator();
  const home = mkdtempSync(join(tmpdir(), 'e2e-bob-'));
  let platform: RunningPlatform | undefined;
  const close = async () => {
    await platform?.kill();
    await Promise.all([model.close(), oauth.close(), google.close(), translator.close()]);
    rmSync(home, { recursive: true, force: true });
  };
  try {
    platform = await startPlatform({
      ...(options.postgresAdminUrl ? { postgresAdminUrl: options.postgresAdminUrl } : {}),
      env: {
        GATEWAY_UPSTREAM_URL: model.url,
        CONNECTOR_PORT: String(connectorPort),
        CONNECTOR_GOOGLE_CLIENT_ID: clientId,
        CONNECTOR_GOOGLE_CLIENT_SECRET: clientSecret,
        CONNECTOR_GOOGLE_AUTHORIZE_URL: oauth.authorizeUrl,
        CONNECTOR_GOOGLE_TOKEN_URL: oauth.tokenUrl,
        CONNECTOR_GOOGLE_REVOKE_URL: oauth.revokeUrl,
        CONNECTOR_GOOGLE_API_URL: google.url,
        // Batches close every second and the chain side looks every 200 ms, so a withdrawal is paid within seconds.
        SETTLEMENT_WINDOW_SECONDS: '1',
        SETTLEMENT_CHAIN_POLL_MS: '200',
        // A daemon nobody uses (and not at work) is stopped after a second, the shortest the router takes: the alarm
        // flow wakes a sleeping one.
        ROUTER_IDLE_TIMEOUT: '1s',
      },
    });
    const running = platform;
    const serviceId = await publishListing(running.url('marketplace'), translator.url);
    const token = await running.token();
    const client = new DaemonClient({ baseUrl: running.url('router'), token });
    const me = await client.me();
    const bobEnv = {
      HOME: home,
      PLATFORM_AGENT_FILE: join(home, 'agent.json'),
      PLATFORM_SETTLEMENT_URL: running.url('settlement'),
      LEDGER_TOKEN: await running.secret('LEDGER_TOKEN'),
    };
    const bob = (args: readonly string[]) => running.run(args, bobEnv);
    const created = await bob(['agent', 'new', '--json']);
    if (created.code !== 0) throw new Error(`platform agent new: ${created.stderr}`);
    const approveAll =
      (gates: string[]): Approver =>
      async (gate) => {
        gates.push(gate.question);
        return { approved: true, answer: 'approve' };
      };
    return {
      platform: running,
      model,
      oauth,
      google,
      translator,
      serviceId,
      alice: Object.assign(client, { did: me.did, userId: me.user_id }),
      token,
      bob,
      bobDid: (JSON.parse(created.stdout) as { did: string }).did,
      async delegate(prose) {
        const gates: string[] = [];
        let intentId = '';
        const answer = await delegate(client, prose, {
          approver: approveAll(gates),
          pollIntervalMs: 250,
          onSubmitted: (id) => {
            intentId = id;
          },
        });
        return { intentId, answer, gates };
      },
      aliceVolume: () => filesUnder(join(running.dataDir, 'router', 'volumes', me.user_id)),
      async close() {
        // First the model: a call a failed test left waiting for its answer would hold the gateway's drain.
        await model.close();
        const code = await running.stop();
        if (code !== 0) throw new Error(`platform up exited with ${code}: ${running.output().stderr}`);
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Every file under `folder`, as text. */
function filesUnder(folder: string): string {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

/** The JSON a `--json` command printed; fails with its output otherwise. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read the services' JSON as it comes.
export function json(run: CommandRun): any {
  if (run.code !== 0) throw new Error(`exit ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** The step's result in the intent's folded state (what the daemon journaled). */
// biome-ignore lint/suspicious/noExplicitAny: tool results are the tools' own JSON.
export async function stepResult(client: DaemonClient, intentId: string, stepId: string): Promise<any> {
  const intent = await client.intent(intentId);
  const step = (intent.state.steps as { id: string; status: string; result?: unknown }[]).find((candidate) => candidate.id === stepId);
  if (step?.status !== 'done') throw new Error(`step ${stepId} is ${step?.status}: ${JSON.stringify(intent.state.steps)}`);
  return step.result;
}
