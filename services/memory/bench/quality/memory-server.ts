import type { Env } from '@platform/kit/config';
import { openDatabase } from '@platform/kit/db/open-database';
import { httpCall } from '@platform/testkit/http-call';
import { ManualClock } from '@platform/testkit/manual-clock';
import pino from 'pino';
import { composeMemory } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import type { MemorySchema } from '../../src/db/schema.ts';
import { pgliteExtensions } from '../../src/main.ts';
import type { QualityMemory, QualityQuery } from './score.ts';

const dayMs = 86_400_000;
const now = new Date('2026-11-01T12:00:00Z');

/**
 * Our memory server, fed the quality set the way an agent would: each memory remembered at its age (a manual
 * clock set to `days_ago` before now), supersessions passed as `supersedes`; then one recall per query.
 * Runs on embedded PGlite in memory: ranking does not depend on the engine.
 */
export async function rankWithMemoryServer(memories: QualityMemory[], queries: QualityQuery[], env: Env = {}): Promise<Map<string, string[]>> {
  const logger = pino({ level: 'silent' });
  const database = await openDatabase<MemorySchema>({ logger, pgliteExtensions });
  const clock = new ManualClock(now);
  const memory = await composeMemory(database, loadConfig({ MEMORY_MCP_TOKEN: 'bench', ...env }), clock, logger);
  await memory.app.listen({ host: '127.0.0.1', port: 0 });
  const address = memory.app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const call = async (tool: string, body: unknown) => {
    const answer = await httpCall(url, 'POST', `/v1/${tool}`, { bearer: 'bench', body });
    if (answer.status !== 200) throw new Error(`${tool} answered ${answer.status}: ${answer.text}`);
    return answer.json.data;
  };
  try {
    const ids = new Map<string, string>();
    const refs = new Map<string, string>();
    for (const entry of memories) {
      clock.set(new Date(now.getTime() - entry.days_ago * dayMs));
      const supersedes = (entry.supersedes ?? []).map((ref) => ids.get(`${entry.scope}/${ref}`)).filter((id) => id !== undefined);
      const data = await call('remember', {
        scope: entry.scope,
        memories: [{ content: entry.content, kind: entry.kind, tags: entry.tags, importance: entry.importance, supersedes }],
      });
      const id = data.memories[0].id as string;
      ids.set(`${entry.scope}/${entry.ref}`, id);
      if (!refs.has(id)) refs.set(id, entry.ref);
    }
    await memory.backfill();
    clock.set(now);
    const rankings = new Map<string, string[]>();
    for (const query of queries) {
      const data = await call('recall', { scope: query.scope, query: query.query, limit: 10, max_tokens: 32_000 });
      rankings.set(
        query.id,
        data.memories.map((found: { id: string }) => refs.get(found.id) ?? found.id),
      );
    }
    return rankings;
  } finally {
    await memory.stopBackgroundWork();
    await memory.app.close();
    await database.close();
  }
}
