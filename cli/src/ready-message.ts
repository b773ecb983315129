import type { Env } from '@platform/kit/config';

/** What `platform up` prints once every service listens: where each is, what is missing, and how to talk to the agent. */
export function readyMessage(env: Env, rows: readonly { name: string; url: string; dataLocation: string }[]): string {
  const lines = [table([['name', 'url', 'data'], ...rows.map((row) => [row.name, row.url, row.dataLocation])])];
  // `up` runs a development identity provider unless IDP_URL names one (or in production): then the router works.
  const identity = rows.some((row) => row.name === 'identity');
  const notes = missing(env, identity);
  if (notes.length > 0)
    lines.push(
      '',
      'not configured yet:',
      ...table(notes)
        .split('\n')
        .map((line) => `  ${line}`),
    );
  const router = rows.find((row) => row.name === 'router');
  const daemon = rows.find((row) => row.name === 'daemon');
  const dataDir = [
    env.DATA_DIR && `DATA_DIR=${shellQuote(env.DATA_DIR)} `,
    identity && env.IDENTITY_DATA_DIR && `IDENTITY_DATA_DIR=${shellQuote(env.IDENTITY_DATA_DIR)} `,
  ]
    .filter(Boolean)
    .join('');
  // Through the router, as the development user: their token is the bearer, the router wakes their own daemon.
  if (identity && router !== undefined)
    lines.push(
      '',
      'talk to your agent through the router (in another terminal; a token lasts an hour):',
      `  export DAEMON_URL=${router.url} PLATFORM_DAEMON_TOKEN=$(${dataDir}npx platform token)`,
      `  npx platform delegate "what can you do?"`,
    );
  else if (daemon !== undefined)
    lines.push(
      '',
      'talk to your agent (in another terminal):',
      `  export DAEMON_URL=${daemon.url} PLATFORM_DAEMON_TOKEN=$(${dataDir}npx platform secret PLATFORM_DAEMON_TOKEN)`,
      `  npx platform delegate "what can you do?"`,
    );
  return lines.join('\n');
}

/** Settings without which a part of the platform answers "not configured", each with what to set. */
function missing(env: Env, identity: boolean): string[][] {
  const notes: string[][] = [];
  if (!env.GATEWAY_UPSTREAM_URL)
    notes.push(['gateway', 'no model provider: set GATEWAY_UPSTREAM_URL (any OpenAI-compatible API) and GATEWAY_UPSTREAM_API_KEY; until then chat says so']);
  if (!env.IDP_URL && !identity) notes.push(['router', 'no identity provider: set IDP_URL and ROUTER_IDP_AUDIENCE; until then its public routes answer 503']);
  if (!env.CONNECTOR_GOOGLE_CLIENT_ID || !env.CONNECTOR_GOOGLE_CLIENT_SECRET)
    notes.push(['connector', 'no OAuth client: set CONNECTOR_GOOGLE_CLIENT_ID and CONNECTOR_GOOGLE_CLIENT_SECRET to connect mail and calendar']);
  return notes;
}

function shellQuote(value: string): string {
  return /^[\w./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Left-aligned columns separated by two spaces. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  const line = (row: readonly string[]) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return rows.map((row) => line(row).trimEnd()).join('\n');
}
