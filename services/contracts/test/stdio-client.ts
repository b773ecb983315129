import { type ChildProcess, spawn } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * An MCP client transport over a child process we spawn ourselves, so the test sees every raw stdout line the
 * server wrote (the SDK's own stdio transport hides them) and can hold each one to being a JSON-RPC message.
 */
export class RecordingStdioTransport implements Transport {
  readonly stdoutLines: string[] = [];
  stderr = '';
  child: ChildProcess | undefined;
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #command: string;
  readonly #args: string[];
  readonly #env: Record<string, string>;
  #buffer = '';

  constructor(command: string, args: string[], env: Record<string, string>) {
    this.#command = command;
    this.#args = args;
    this.#env = env;
  }

  async start(): Promise<void> {
    const child = spawn(this.#command, this.#args, { env: this.#env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      this.#buffer += chunk.toString('utf8');
      for (let newline = this.#buffer.indexOf('\n'); newline !== -1; newline = this.#buffer.indexOf('\n')) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        this.stdoutLines.push(line);
        try {
          this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
        } catch (error) {
          this.onerror?.(error as Error);
        }
      }
    });
    child.on('exit', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child?.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  /** Ends stdin, which is how a client ends a stdio session, and waits for the server to exit. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.stdin?.end();
    });
  }
}
