import { createInterface } from 'node:readline';
import { DaemonClient, DaemonUnreachableError, shownUrl } from '@platform/client/daemon-client';
import { type Approver, DelegationError, delegate } from '@platform/client/delegate';
import { defaultGateOptions, isDenial } from '@platform/client/gate-options';
import { ServiceCallError } from '@platform/client/service-session';
import { describeFailure } from './agent/command-output.ts';

/** Asks the person at each gate on the terminal (or reads answers line by line from a pipe). */
function terminalApprover(): { approver: Approver; close: () => void } {
  const lines = createInterface({ input: process.stdin, terminal: false });
  const queue: string[] = [];
  const waiting: ((line: string | undefined) => void)[] = [];
  let closed = false;
  lines.on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else queue.push(line);
  });
  lines.on('close', () => {
    closed = true;
    for (const next of waiting.splice(0)) next(undefined);
  });
  const readLine = () =>
    queue.length > 0
      ? Promise.resolve(queue.shift())
      : closed
        ? Promise.resolve(undefined)
        : new Promise<string | undefined>((resolve) => waiting.push(resolve));
  const approver: Approver = async (gate) => {
    const options = gate.options.length > 0 ? gate.options : defaultGateOptions;
    process.stderr.write(`\n? ${gate.question}\n${options.map((option, index) => `  ${index + 1}) ${option}`).join('\n')}\n> `);
    const line = (await readLine())?.trim() ?? '';
    const picked = /^\d+$/.test(line) ? options[Number(line) - 1] : line;
    // No answer (end of input) is a denial: nothing happens without a person saying yes.
    if (picked === undefined || picked === '' || isDenial(picked)) return { approved: false, answer: picked ?? '' };
    return { approved: true, answer: picked };
  };
  return { approver, close: () => lines.close() };
}

type Env = Readonly<Record<string, string | undefined>>;

/** Where the daemon listens under `platform up`, for the hint when nothing answers. */
const whereDaemonsListen = 'http://127.0.0.1:8443 through the router, http://127.0.0.1:8080 for the daemon itself';
/** How to get a bearer the daemon takes, for the hint when it refuses one. */
const howToGetAToken =
  'through the router, export PLATFORM_DAEMON_TOKEN=$(npx platform token) (a token lasts an hour); for the daemon itself, $(npx platform secret PLATFORM_DAEMON_TOKEN)';

/**
 * `platform delegate "<prose>"`: hands the prose to the daemon at DAEMON_URL (default http://127.0.0.1:8080, bearer
 * PLATFORM_DAEMON_TOKEN), prints progress to stderr, asks at each gate, and prints the answer on stdout.
 * Exit 0 with an answer; 1 when the intent failed, was cancelled, needs more detail or timed out, or the daemon could
 * not be reached or refused the token (each saying which setting to change); 2 for a usage error.
 */
export async function delegateCommand(args: readonly string[], env: Env): Promise<number> {
  let url = env.DAEMON_URL || 'http://127.0.0.1:8080';
  let timeoutSeconds = 1800;
  const words: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === '--url' && args[index + 1]) url = args[++index] as string;
    else if (arg === '--timeout') {
      const seconds = args[++index] ?? '';
      timeoutSeconds = /^\d+(\.\d+)?$/.test(seconds) ? Number(seconds) : 0;
      if (timeoutSeconds <= 0) return usage('--timeout takes the longest wait in seconds, like 90 or 1.5');
    } else if (arg.startsWith('--')) return usage(`unknown option ${arg}`);
    else words.push(arg);
  }
  const prose = words.join(' ').trim();
  if (prose === '') return usage('delegate takes the request as its argument: platform delegate "pay Bob 5 for lunch"');
  if (!/^https?:$/.test(URL.parse(url)?.protocol ?? ''))
    return usage(`DAEMON_URL (or --url) must be the daemon's http(s) address, like ${whereDaemonsListen}; got ${shownUrl(url)}`);
  const client = new DaemonClient({ baseUrl: url, ...(env.PLATFORM_DAEMON_TOKEN ? { token: env.PLATFORM_DAEMON_TOKEN } : {}) });
  const terminal = terminalApprover();
  try {
    const answer = await delegate(client, prose, {
      approver: terminal.approver,
      maxWaitMs: timeoutSeconds * 1000,
      onSubmitted: (id) => process.stderr.write(`intent ${id}\n`),
      onEvent: (event) => {
        const data = event.data as { status?: string; envelope?: { body?: { node_id?: string; tool?: string } } };
        if (event.event === 'status' && data.status) process.stderr.write(`· ${data.status}\n`);
        if (event.event === 'step.started')
          process.stderr.write(`· step ${data.envelope?.body?.node_id}${data.envelope?.body?.tool ? ` (${data.envelope.body.tool})` : ''}\n`);
      },
    });
    console.log(answer);
    return 0;
  } catch (error) {
    console.error(`platform delegate: ${failureLine(error, url, env)}`);
    return 1;
  } finally {
    terminal.close();
  }
}

/** One line for why the delegation ended without an answer, naming the setting to change when it is one of ours. */
function failureLine(error: unknown, url: string, env: Env): string {
  if (error instanceof DelegationError) return `${error.kind}: ${error.message}`;
  if (error instanceof DaemonUnreachableError) return `${error.message}: is it running? DAEMON_URL (or --url) says where it listens: ${whereDaemonsListen}`;
  if (error instanceof ServiceCallError && error.status === 401) {
    const token = env.PLATFORM_DAEMON_TOKEN ? 'refused the token in PLATFORM_DAEMON_TOKEN' : 'wants a token and PLATFORM_DAEMON_TOKEN is not set';
    return `the daemon at ${shownUrl(url)} ${token} (${error.message}); set PLATFORM_DAEMON_TOKEN: ${howToGetAToken}`;
  }
  return describeFailure(error, { service: 'the daemon', url: shownUrl(url) }).line;
}

function usage(problem: string): number {
  console.error(`platform delegate: ${problem}`);
  return 2;
}
