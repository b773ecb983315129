import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { SyntheticMemory } from './synthetic.ts';

const serverPath = fileURLToPath(import.meta.resolve('@modelcontextprotocol/server-memory/dist/index.js'));

export interface OfficialServer {
  call(name: string, args: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/**
 * The official MCP memory server over stdio with the corpus already in its JSONL file (written in its own format:
 * one entity per memory, as create_entities would have stored it; creating 100,000 through the tool is quadratic).
 */
export async function startOfficialServer(memories: readonly SyntheticMemory[]): Promise<OfficialServer> {
  const folder = mkdtempSync(join(tmpdir(), 'official-memory-bench-'));
  const file = join(folder, 'memory.jsonl');
  writeFileSync(
    file,
    memories.map((memory, index) => JSON.stringify({ type: 'entity', name: `m${index}`, entityType: memory.kind, observations: [memory.content] })).join('\n'),
  );
  const client = new Client({ name: 'memory-bench', version: '0.1.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [serverPath], env: { ...getDefaultEnvironment(), MEMORY_FILE_PATH: file }, stderr: 'ignore' }),
  );
  return {
    async call(name, args) {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name} failed`);
    },
    async close() {
      await client.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
