import { useTerminalLogLines } from '@platform/kit/terminal-log-lines';
import { delegateCommand } from './delegate-command.ts';
import { parseInstances } from './instances.ts';
import { journalCommand } from './journal-command.ts';
import { secretCommand } from './secret-command.ts';
import { findService, serviceNames } from './services.ts';
import { tokenCommand } from './token-command.ts';
import { describeError, up } from './up.ts';

const usage = `Usage: platform <command>

Commands:
  up               start every service in this process (embedded PGlite, default ports) and print where they listen
  up --instances scheduler=3,settlement=2
                   several instances of those, each a process of its own, on one PostgreSQL (DATABASE_URL)
  up --log-requests  in a terminal, also one line per HTTP request (as LOG_LEVEL=debug does); logs are one line
                   per event, prefixed by the service (JSON lines when stdout is not a terminal)
  up --observe     also print each service's metrics URL and bearer, and write a Prometheus config for this
                   platform into DATA_DIR/observe (deploy/observability's alert rules; traces: OTEL_EXPORTER_OTLP_ENDPOINT)
  serve <service>  start one service in the foreground (services: ${serviceNames()})
  mcp contracts    the contract engine as an MCP server over stdio (PLATFORM_AGENT_DID = the caller)
  mcp connector    the connector's tools over stdio, called through the connector service (PLATFORM_CONNECTOR_URL,
                   PLATFORM_CONNECTOR_TOKEN, PLATFORM_AGENT_KEY, PLATFORM_AGENT_USER_ID, CONNECTOR_TOOL_REGISTRY)
  connector registry  print the connector's MCP tool registry (JSON) for CONNECTOR_TOOL_REGISTRY
  delegate "<prose>"  hand a request to the daemon (DAEMON_URL, PLATFORM_DAEMON_TOKEN), answer its gates here,
                   print the answer [--url <daemon url>] [--timeout <seconds>]
  journal verify <folder>  check a daemon's signed intent journals offline [--public-key <hex>]
  secret <SETTING>  print a secret \`up\` derives from its root (PLATFORM_SECRET or DATA_DIR/platform.secret),
                   e.g. PLATFORM_DAEMON_TOKEN (the bearer of the daemon \`up\` runs, never the router's root);
                   --for <service>: SETTING=value lines of all a service receives (deploy/make-env.sh)
  token            print a fresh token (an hour) of the development user for the router, from the identity provider
                   \`up\` runs in development (DATA_DIR as for \`up\`)
  agent new|show   create the agent key file (0600; PLATFORM_AGENT_FILE, default ~/.config/platform/agent.json), or show
                   its DID and public key
  agent use        act for your own agent (DAEMON_URL, PLATFORM_DAEMON_TOKEN): link the key with it (made for its user
                   when missing), so the alarms you make wake it
  alarm create|list|cancel  the agent's alarms on the scheduler (PLATFORM_SCHEDULER_URL, SCHEDULER_TOKEN)
  balance | pay <did> <amount> | deposit [<amount> --faucet] | withdraw <amount>|bind|status
                   the agent's account on settlement (PLATFORM_SETTLEMENT_URL, LEDGER_TOKEN)
  receipt verify <seq>  check a settlement receipt, its checkpoint and proofs offline [--public-key <hex>]
  market search|quote|call  discover, quote and call paid services (PLATFORM_MARKETPLACE_URL; call: --max-payment)
  market deploy|logs        upload and run a Worker in hosted mode, read its logs (PLATFORM_DEVELOPER_KEY)
                   (agent commands: --json for scripts, --url <service url>; exit 1 failed, 2 usage)
  help             show this text

Settings come from the environment (PORT, HOST, DATA_DIR, DATABASE_URL, LOG_LEVEL and each service's own).
Under \`up\`, <SERVICE>_PORT and <SERVICE>_DATA_DIR set one service's port and folder; DATA_DIR is their parent.
From the repo, \`npm start\` runs \`platform up\` with the pinned Node 24.`;

/**
 * Runs one command and exits with its code (stopped services may leave handles open, so exiting is explicit).
 * `serve` returns no code: the service runs until its own signal handler exits the process.
 */
export async function main(args: readonly string[]): Promise<void> {
  const code = await run(args);
  if (code !== undefined) process.exit(code);
}

async function run(args: readonly string[]): Promise<number | undefined> {
  const [command, ...rest] = args;
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(usage);
      return 0;
    case 'up':
      return upCommand(rest);
    case 'serve':
      if (rest.length !== 1 || rest[0] === undefined) return usageError('serve takes exactly one service name');
      return serve(rest[0]);
    case 'delegate':
      return delegateCommand(rest, process.env);
    case 'journal':
      return journalCommand(rest, process.env);
    case 'secret':
      return secretCommand(rest, process.env);
    case 'token':
      return tokenCommand(rest, process.env);
    case 'agent':
    case 'alarm':
    case 'balance':
    case 'pay':
    case 'deposit':
    case 'withdraw':
    case 'receipt':
    case 'market':
      return (await import('./agent/agent-cli.ts')).agentCli(command, rest, process.env);
    case 'mcp':
      if (rest.length !== 1 || (rest[0] !== 'contracts' && rest[0] !== 'connector')) return usageError('mcp takes one service: contracts or connector');
      return mcp(rest[0]);
    case 'connector':
      if (rest.length !== 1 || rest[0] !== 'registry') return usageError('connector takes one command: registry');
      return connectorRegistry();
    default:
      return usageError(`unknown command "${command}"`);
  }
}

/** Starts one service with its own signal handling (SIGINT/SIGTERM stop it and exit). */
async function serve(name: string): Promise<number | undefined> {
  const entry = findService(name);
  if (!entry) {
    console.error(`platform serve: unknown service "${name}"; known services: ${serviceNames()}`);
    return 2;
  }
  // An instance `up --instances` started in its terminal (instances.ts) prints up's lines; otherwise JSON or pretty.
  const lines = process.env.PLATFORM_TERMINAL_LOG_LINES;
  if (lines === 'events' || lines === 'requests') useTerminalLogLines({ requests: lines === 'requests', color: process.stdout.isTTY === true });
  try {
    const { start } = await entry.load();
    await start(process.env, { handleSignals: true });
  } catch (error) {
    console.error(`platform serve: ${name} failed to start: ${describeError(error)}`);
    return 1;
  }
  return undefined;
}

/** `up [--instances <service>=<n>,…] [--log-requests] [--observe]`. */
function upCommand(args: readonly string[]): Promise<number> | number {
  let instances = new Map<string, number>();
  let logRequests = false;
  let observe = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--log-requests') logRequests = true;
    else if (arg === '--observe') observe = true;
    else if (arg === '--instances' && args[index + 1] !== undefined) {
      try {
        instances = parseInstances(args[++index] as string);
      } catch (error) {
        return usageError((error as Error).message);
      }
    } else return usageError(`unexpected argument "${arg}"`);
  }
  return up(process.env, instances, { logRequests, observe });
}

/** An MCP server over stdio: stdout carries protocol messages only, so every word of ours goes to stderr. */
async function mcp(name: 'contracts' | 'connector'): Promise<number> {
  try {
    const server =
      name === 'contracts'
        ? await (await import('../../services/contracts/src/mcp-stdio.ts')).runStdio(process.env)
        : await (await import('../../services/connector/src/mcp/proxy.ts')).runProxy(process.env);
    // Run by a client (stdin a pipe), the end of stdin is the stop: the client stops us in its turn, and we stop when
    // it dies. A terminal's Ctrl-C reaches its whole process group, client included, and must not end us first.
    if (process.stdin.isTTY) process.once('SIGINT', () => void server.close());
    else process.on('SIGINT', () => undefined);
    process.once('SIGTERM', () => void server.close());
    await server.closed;
    return 0;
  } catch (error) {
    console.error(`platform mcp: ${name} failed to start: ${describeError(error)}`);
    return 1;
  }
}

/** The connector's tool registry on stdout, for `> tools.json` and CONNECTOR_TOOL_REGISTRY. */
async function connectorRegistry(): Promise<number> {
  const { generateRegistry } = await import('../../services/connector/src/mcp/registry.ts');
  process.stdout.write(`${JSON.stringify(generateRegistry(), null, 2)}\n`);
  return 0;
}

function usageError(problem: string): number {
  console.error(`platform: ${problem}\n\n${usage}`);
  return 2;
}

if (import.meta.main) void main(process.argv.slice(2));
