import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '@platform/kit/free-port';
import { pollUntil } from './eventually.ts';

/*
 * Portkey's open-source AI gateway (`@portkey-ai/gateway`, a devDependency of the repository) in a process of its own,
 * the peer of the platform gateway's benchmark. It runs as its README starts it (`npx @portkey-ai/gateway`: the
 * package's own build/start-server.js, which its Docker image runs too), with `--headless` so it serves no log console,
 * on the pinned Node. It takes a port and no host, so it listens on every interface; the bench only calls it over
 * loopback. Requests name the provider and where it is (`portkeyUpstreamHeaders`): 127.0.0.1 is one of its default
 * trusted custom hosts.
 */

const entry = fileURLToPath(import.meta.resolve('@portkey-ai/gateway/build/start-server.js'));
const packageFile = fileURLToPath(import.meta.resolve('@portkey-ai/gateway/package.json'));

export interface PortkeyGateway {
  /** Its base URL; OpenAI's routes are under /v1. */
  url: string;
  pid: number;
  version: string;
  /** SIGTERM, then SIGKILL after two seconds; resolves once it has exited. */
  stop(): Promise<void>;
}

/** The headers that send a call through Portkey to an OpenAI-compatible upstream (`upstreamV1` ends in /v1). */
export function portkeyUpstreamHeaders(upstreamV1: string, apiKey: string): Record<string, string> {
  return { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstreamV1, authorization: `Bearer ${apiKey}` };
}

/**
 * Starts Portkey on a free port and resolves once `GET /` answers (it prints a one-second start animation first).
 *
 * @example const portkey = await startPortkeyGateway(); ...; await portkey.stop();
 */
export async function startPortkeyGateway(options: { timeoutMs?: number } = {}): Promise<PortkeyGateway> {
  const port = await freePort();
  // Its stdout is the start animation and banner only; its errors go to stderr, which the bench shows.
  const child = spawn(process.execPath, [entry, `--port=${port}`, '--headless'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await pollUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`Portkey's gateway exited with ${child.exitCode} before it answered`);
        return (await fetch(url).catch(() => undefined))?.ok === true;
      },
      `Portkey's gateway answering at ${url}`,
      { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const version = (JSON.parse(readFileSync(packageFile, 'utf8')) as { version: string }).version;
  return { url, pid: child.pid as number, version, stop };
}
