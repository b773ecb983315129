import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { QualityMemory, QualityQuery } from './score.ts';

/*
 * The reference point: @modelcontextprotocol/server-memory, driven over stdio the way its users drive it.
 * Its search_nodes is a case-insensitive substring match of the whole query against entity name, type and
 * observations, returned in insertion order, so the ranking is just the order the entities were created.
 */

const SERVER = fileURLToPath(import.meta.resolve('@modelcontextprotocol/server-memory/dist/index.js'));
const BATCH = 50;

const entityName = (m: { scope: string; ref: string }): string => `${m.scope}/${m.ref}`;

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

function entityNames(found: Record<string, unknown>): string[] {
  const entities = Array.isArray(found.entities) ? (found.entities as unknown[]) : [];
  return entities.flatMap((e) => (typeof e === 'object' && e !== null && 'name' in e && typeof e.name === 'string' ? [e.name] : []));
}

async function load(client: Client, memories: QualityMemory[]): Promise<void> {
  for (let i = 0; i < memories.length; i += BATCH) {
    const batch = memories.slice(i, i + BATCH);
    const entities = batch.map((m) => ({
      name: entityName(m),
      entityType: m.kind,
      observations: m.tags.length > 0 ? [m.content, `tags: ${m.tags.join(', ')}`] : [m.content],
    }));
    await call(client, 'create_entities', { entities });
    // Superseded refs are always earlier in the array, so they exist by now; deleting is how this server replaces a fact.
    const replaced = batch.flatMap((m) => (m.supersedes ?? []).map((ref) => entityName({ scope: m.scope, ref })));
    if (replaced.length > 0) await call(client, 'delete_entities', { entityNames: replaced });
  }
}

export async function rankWithOfficialServer(memories: QualityMemory[], queries: QualityQuery[]): Promise<Map<string, string[]>> {
  const dir = await mkdtemp(join(tmpdir(), 'official-memory-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER],
    env: { ...getDefaultEnvironment(), MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'memory-quality-bench', version: '0.1.0' });
  try {
    await client.connect(transport);
    await load(client, memories);
    const rankings = new Map<string, string[]>();
    for (const q of queries) {
      const prefix = `${q.scope}/`;
      const names = entityNames(await call(client, 'search_nodes', { query: q.query }));
      const inScope = names.filter((n) => n.startsWith(prefix));
      rankings.set(
        q.id,
        inScope.map((n) => n.slice(prefix.length)),
      );
    }
    return rankings;
  } finally {
    await client.close();
    await rm(dir, { recursive: true, force: true });
  }
}
