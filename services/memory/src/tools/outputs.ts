import { isoTime, nullable, oneOf, uuid } from '@platform/kit/wire-schemas';
import { Type } from 'typebox';
import { memoryKinds } from '../db/schema.ts';

/**
 * What each tool answers (`memory/memory-view.ts`, `recall.ts`, `search.ts`, `memory-store.ts`): the JSON routes'
 * response schemas, which also serialise them.
 */

const MemoryView = Type.Object({
  id: uuid(),
  scope: Type.String(),
  content: nullable(Type.String({ description: 'Null once erased (forgotten with hard: true)' })),
  kind: oneOf(memoryKinds),
  tags: Type.Array(Type.String()),
  key: nullable(Type.String()),
  importance: Type.Number(),
  source: Type.Object({ conversation_id: nullable(Type.String()), intent_id: nullable(Type.String()) }),
  created_at: isoTime(),
  status: oneOf(['valid', 'superseded', 'forgotten', 'erased']),
  valid: Type.Boolean(),
  invalidated_at: nullable(isoTime()),
  superseded_by: nullable(uuid()),
  forgotten_at: nullable(isoTime()),
});

const MatchReason = Type.Object({
  matched_words: Type.Array(Type.String()),
  near_spellings: Type.Array(Type.Object({ word: Type.String(), matched: Type.String() })),
  keyword_rank: nullable(Type.Integer()),
  semantic_rank: nullable(Type.Integer()),
  similarity: nullable(Type.Number()),
  recency: Type.Number(),
  importance: Type.Number(),
  summary: Type.String(),
});

export const toolOutputs = {
  remember: Type.Object({
    scope: Type.String(),
    memories: Type.Array(
      Type.Object({
        id: uuid(),
        status: oneOf(['created', 'duplicate'], 'duplicate: an equal valid memory already held it; its id is returned'),
        superseded: Type.Array(uuid(), { description: 'The memories this one replaced' }),
      }),
    ),
  }),
  recall: Type.Object({
    memories: Type.Array(Type.Object({ ...MemoryView.properties, score: Type.Number(), why: MatchReason })),
    tokens_used: Type.Integer(),
    max_tokens: Type.Integer(),
    omitted: Type.Integer({ description: 'Relevant memories left out by the budget or the limit' }),
    channels: Type.Array(oneOf(['keyword', 'semantic'])),
  }),
  search: Type.Object({
    memories: Type.Array(Type.Object({ ...MemoryView.properties, score: nullable(Type.Number()), matched_words: Type.Array(Type.String()) })),
    next_cursor: nullable(Type.String({ description: 'Pass back as cursor for the next page' })),
  }),
  forget: Type.Object({ id: uuid(), status: oneOf(['forgotten', 'erased']), changed: Type.Boolean({ description: 'False when it already was' }) }),
  get: MemoryView,
  history: Type.Object({
    id: uuid(),
    current: nullable(uuid('The valid version, if one is')),
    chain: Type.Array(Type.Object({ ...MemoryView.properties, supersedes: Type.Array(uuid()) }), { description: 'Oldest first' }),
  }),
};
