import { loadQualitySet, type QualityMemory, type QualityQuery } from './score.ts';

/* Consistency checks for memories.json and queries.json; `node validate-dataset.ts` exits 1 on any problem. */

const KINDS = new Set(['fact', 'preference', 'event', 'note', 'procedure']);
const CATEGORIES = new Set(['keyword', 'paraphrase', 'stem', 'typo', 'updated', 'distractor', 'multi']);

function memoryProblems(memories: QualityMemory[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, QualityMemory>();
  for (const m of memories) {
    const at = `memory ${m.ref}`;
    if (!/^m\d{3}$/.test(m.ref)) problems.push(`${at}: ref should look like m001`);
    if (seen.has(m.ref)) problems.push(`${at}: duplicate ref`);
    if (!m.scope) problems.push(`${at}: empty scope`);
    if (!m.content.trim()) problems.push(`${at}: empty content`);
    if (!KINDS.has(m.kind)) problems.push(`${at}: unknown kind ${m.kind}`);
    if (!(m.importance >= 0 && m.importance <= 1)) problems.push(`${at}: importance outside [0, 1]`);
    if (!Number.isInteger(m.days_ago) || m.days_ago < 0 || m.days_ago > 400) problems.push(`${at}: days_ago outside 0..400`);
    if (m.tags.length > 4 || m.tags.some((t) => !/^[a-z0-9-]{1,20}$/.test(t))) problems.push(`${at}: tags must be 0-4 short lowercase words`);
    for (const old of m.supersedes ?? []) {
      // Only refs already seen are earlier in the array, which is the order a system ingests them.
      const target = seen.get(old);
      if (!target) problems.push(`${at}: supersedes ${old}, which is not an earlier memory`);
      else if (target.scope !== m.scope) problems.push(`${at}: supersedes ${old} from another scope`);
      else if (target.days_ago < m.days_ago) problems.push(`${at}: supersedes ${old}, which is newer`);
    }
    seen.set(m.ref, m);
  }
  return problems;
}

function queryProblems(queries: QualityQuery[], memories: QualityMemory[]): string[] {
  const problems: string[] = [];
  const byRef = new Map(memories.map((m) => [m.ref, m]));
  const superseded = new Set(memories.flatMap((m) => m.supersedes ?? []));
  const ids = new Set<string>();
  for (const q of queries) {
    const at = `query ${q.id}`;
    if (ids.has(q.id)) problems.push(`${at}: duplicate id`);
    ids.add(q.id);
    if (!q.query.trim()) problems.push(`${at}: empty query`);
    if (!CATEGORIES.has(q.category)) problems.push(`${at}: unknown category ${q.category}`);
    if (q.expected.length < 1 || q.expected.length > 3) problems.push(`${at}: expected should hold 1-3 refs`);
    if (new Set(q.expected).size !== q.expected.length) problems.push(`${at}: duplicate expected ref`);
    if (q.category === 'multi' && q.expected.length < 2) problems.push(`${at}: multi query needs 2-3 expected refs`);
    for (const ref of q.expected) {
      const m = byRef.get(ref);
      if (!m) problems.push(`${at}: expected ${ref} does not exist`);
      else if (m.scope !== q.scope) problems.push(`${at}: expected ${ref} is in scope ${m.scope}, not ${q.scope}`);
      if (superseded.has(ref)) problems.push(`${at}: expected ${ref} is superseded`);
    }
    if (q.category === 'updated' && !q.stale?.length) problems.push(`${at}: updated query without stale refs`);
    if (q.category !== 'updated' && q.stale) problems.push(`${at}: stale given for a ${q.category} query`);
    for (const ref of q.stale ?? []) {
      const m = byRef.get(ref);
      if (!m) problems.push(`${at}: stale ${ref} does not exist`);
      else if (m.scope !== q.scope) problems.push(`${at}: stale ${ref} is in scope ${m.scope}, not ${q.scope}`);
      if (!superseded.has(ref)) problems.push(`${at}: stale ${ref} is not superseded`);
    }
  }
  return problems;
}

export function findProblems(memories: QualityMemory[], queries: QualityQuery[]): string[] {
  return [...memoryProblems(memories), ...queryProblems(queries, memories)];
}

function count<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

if (import.meta.main) {
  const { memories, queries } = loadQualitySet();
  const problems = findProblems(memories, queries);
  console.log(
    `memories: ${memories.length}`,
    count(memories, (m) => m.scope),
  );
  console.log(
    'memory kinds:',
    count(memories, (m) => m.kind),
  );
  console.log(`memories that supersede others: ${memories.filter((m) => m.supersedes?.length).length}`);
  console.log(
    `queries: ${queries.length}`,
    count(queries, (q) => q.scope),
  );
  console.log(
    'query categories:',
    count(queries, (q) => q.category),
  );
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`${problems.length} problem(s)`);
    process.exitCode = 1;
  } else console.log('dataset OK');
}
