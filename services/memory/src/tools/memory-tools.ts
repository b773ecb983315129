import { invalidRequest } from '@platform/kit/errors';
import type { Static } from 'typebox';
import type { MemoryKind } from '../db/schema.ts';
import { limits } from '../limits.ts';
import type { MemoryFilters } from '../memory/memory-filters.ts';
import type { MemoryService } from '../memory/memory-service.ts';
import type { QueryText } from '../memory/query-terms.ts';
import type { RecallResult } from '../memory/recall.ts';
import { forgetInput, idInput, recallInput, rememberInput, searchInput } from './schemas.ts';
import { defineTool, type MemoryTool } from './tool.ts';

const scopeOf = (input: { scope?: string | undefined }) => input.scope ?? 'default';

function dateOf(value: string | undefined): Date | undefined {
  return value === undefined ? undefined : new Date(value);
}

function filtersOf(
  owner: string,
  input: Static<typeof recallInput> | Static<typeof searchInput>,
  include: { superseded: boolean; forgotten: boolean },
): MemoryFilters {
  const filters: MemoryFilters = {
    owner,
    scope: scopeOf(input),
    kinds: input.kinds,
    tags: input.tags,
    createdAfter: dateOf(input.created_after),
    createdBefore: dateOf(input.created_before),
    includeSuperseded: include.superseded,
    includeForgotten: include.forgotten,
  };
  if (filters.createdAfter && filters.createdBefore && filters.createdAfter >= filters.createdBefore)
    throw invalidRequest('created_after must be before created_before', { field: 'created_after' });
  return filters;
}

// The conversation's newest turns weigh most: the last message fully, earlier ones half, and only the most recent
// text up to the conversation limit is read.
function conversationTexts(input: Static<typeof recallInput>): QueryText[] {
  const texts: QueryText[] = [];
  let budget = limits.conversationChars;
  const messages = input.messages ?? [];
  for (let index = messages.length - 1; index >= 0 && budget > 0; index--) {
    const message = messages[index];
    if (message === undefined || message.role === 'system' || message.content.trim() === '') continue;
    const text = message.content.slice(-budget);
    budget -= text.length;
    texts.unshift({ text, weight: index === messages.length - 1 ? 1 : 0.5 });
  }
  if (input.query !== undefined && input.query.trim() !== '') texts.push({ text: input.query, weight: 1 });
  return texts;
}

function recallText(result: RecallResult): string {
  if (result.memories.length === 0) return 'No relevant memories.';
  const lines = result.memories.map(
    (memory) => `- [${memory.kind}] ${memory.content} (id ${memory.id}, ${memory.created_at.slice(0, 10)}, score ${memory.score})`,
  );
  return `${lines.join('\n')}\n(${result.memories.length} memories, ${result.tokens_used} of ${result.max_tokens} tokens${result.omitted > 0 ? `, ${result.omitted} more left out` : ''})`;
}

/** The memory server's tools, in the order an agent usually needs them. */
export function memoryTools(service: MemoryService): MemoryTool[] {
  return [
    defineTool({
      name: 'remember',
      description:
        'Store one or several memories about the user or their world, each a self-contained statement. An identical or near-identical valid memory in the same scope is not copied: its id comes back with status "duplicate". To record that a fact changed, pass the old memory ids in `supersedes` (or give both the same `key`): the old ones stay in history but are no longer recalled.',
      input: rememberInput,
      annotations: { title: 'Remember', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(input, { owner }) {
        const memories = input.memories.map((memory) => ({
          content: memory.content.trim(),
          kind: (memory.kind ?? 'note') as MemoryKind,
          tags: [...new Set((memory.tags ?? []).map((tag) => tag.trim()))].filter((tag) => tag !== ''),
          key: memory.key?.trim() || undefined,
          importance: memory.importance ?? 0.5,
          supersedes: memory.supersedes ?? [],
          source: memory.source ?? {},
        }));
        const blank = memories.findIndex((memory) => memory.content === '');
        if (blank >= 0) throw invalidRequest(`memories[${blank}].content is blank`, { field: `memories[${blank}].content` });
        return { scope: scopeOf(input), memories: await service.store.remember(owner, scopeOf(input), memories) };
      },
    }),
    defineTool({
      name: 'recall',
      description:
        'Get the memories most relevant to a question or to the current conversation, best first, packed into a token budget. Only current memories come back (not superseded or forgotten ones). Each has a score and `why` it matched. Give `query`, or `messages` (the conversation so far), or both.',
      input: recallInput,
      annotations: { title: 'Recall', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(input, { owner }) {
        const texts = conversationTexts(input);
        if (texts.length === 0) throw invalidRequest('recall needs a non-empty query or at least one non-empty user or assistant message', { field: 'query' });
        return service.recall({
          filters: filtersOf(owner, input, { superseded: false, forgotten: false }),
          texts,
          maxTokens: input.max_tokens ?? limits.recallDefaultTokens,
          limit: input.limit ?? limits.recallDefaultResults,
        });
      },
      text: (result) => recallText(result as RecallResult),
    }),
    defineTool({
      name: 'search',
      description:
        'Find memories by keywords and filters (kind, tags, time), a page at a time; without a query, lists the newest first. Can include superseded and forgotten memories. Pass `next_cursor` back as `cursor` for the next page.',
      input: searchInput,
      annotations: { title: 'Search memories', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (input, { owner }) =>
        service.search({
          filters: filtersOf(owner, input, { superseded: input.include_superseded ?? false, forgotten: input.include_forgotten ?? false }),
          query: input.query,
          limit: input.limit ?? limits.searchDefaultPage,
          cursor: input.cursor,
        }),
    }),
    defineTool({
      name: 'forget',
      description:
        'Forget a memory. By default softly: it is no longer recalled or searched but stays in its history. With hard: true its content is erased for good (use when the user asks for it to be deleted).',
      input: forgetInput,
      annotations: { title: 'Forget', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      run: (input, { owner }) => service.store.forget(owner, input.id, input.hard ?? false, input.reason),
    }),
    defineTool({
      name: 'get',
      description: 'Read one memory by id, whatever its status (valid, superseded or forgotten).',
      input: idInput,
      annotations: { title: 'Get memory', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (input, { owner }) => service.store.get(owner, input.id),
    }),
    defineTool({
      name: 'history',
      description: 'The supersession chain of a memory, oldest first: every version it replaced and every version that replaced it, with which one is current.',
      input: idInput,
      annotations: { title: 'Memory history', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: (input, { owner }) => service.store.history(owner, input.id),
    }),
  ];
}
