import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The engine as its own process (`node src/main.ts`), as `platform serve contracts` runs it, driven over HTTP. */
export class EnginePeer {
  readonly #dataDir = mkdtempSync(join(tmpdir(), 'contracts-bench-engine-'));
  #child: ChildProcess | undefined;
  url = '';

  /** Starts the process and resolves with the ms until it listens (solc loaded, test process up). */
  async start(): Promise<number> {
    const started = performance.now();
    const child = spawn(process.execPath, [new URL('../src/main.ts', import.meta.url).pathname], {
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: this.#dataDir,
        LOG_LEVEL: 'info',
        CONTRACTS_LOCAL_NODE: 'external',
        CONTRACTS_LOCAL_RPC_URL: 'http://127.0.0.1:9',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.#child = child;
    this.url = await new Promise<string>((resolve, reject) => {
      let output = '';
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const listening = /"url":"(http:[^"]+)".*contract engine listening/.exec(output);
        if (!listening) return;
        child.stdout?.off('data', onData);
        // Keep draining the request log, so the engine never blocks on a full pipe.
        child.stdout?.resume();
        resolve(listening[1] as string);
      };
      child.stdout?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`engine exited with ${code}: ${output.slice(-1000)}`)));
    });
    return performance.now() - started;
  }

  /** POSTs a JSON body and returns the data and the wall time in ms. */
  async post(path: string, body: unknown): Promise<{ ms: number; data: Record<string, unknown> }> {
    const started = performance.now();
    const response = await fetch(`${this.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const envelope = (await response.json()) as { ok: boolean; data: Record<string, unknown>; error?: unknown };
    const ms = performance.now() - started;
    if (!envelope.ok) throw new Error(`${path} failed: ${JSON.stringify(envelope.error)}`);
    return { ms, data: envelope.data };
  }

  /** Stops the process; `removeData: false` keeps its data folder for the next start. */
  async stop(removeData = true): Promise<void> {
    const child = this.#child;
    if (child && child.exitCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
    if (removeData) rmSync(this.#dataDir, { recursive: true, force: true });
  }
}
