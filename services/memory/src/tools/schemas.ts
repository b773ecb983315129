import { Type } from 'typebox';
import { memoryKinds } from '../db/schema.ts';
import { limits } from '../limits.ts';

// Printable text without control characters other than tab and newline; names are one line.
const singleLine = '^[^\\u0000-\\u001f\\u007f]*$';
// PostgreSQL text cannot hold NUL; refusing it here keeps it a caller's error instead of a database failure.
const noNul = '^[^\\u0000]*$';

export const scopeField = Type.String({
  minLength: 1,
  maxLength: limits.scopeChars,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:/@-]*$',
  default: 'default',
  description:
    'Which memory space: an agent, a conversation or a project (e.g. "default", "project-atlas", "conv:42"). Letters, digits and . _ : / @ -. Defaults to "default".',
});

export const memoryId = Type.String({
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  description: 'A memory id as returned by remember, recall or search.',
});

const kind = Type.Enum([...memoryKinds], {
  description:
    'fact (about the world or people), preference (likes, wants, how the user wants things), event (something that happened or will, with its date), note, procedure (steps to follow).',
});

const tag = Type.String({ minLength: 1, maxLength: limits.tagChars, pattern: singleLine });

export const kindsFilter = Type.Array(kind, { maxItems: memoryKinds.length, description: 'Only memories of these kinds.' });
export const tagsFilter = Type.Array(tag, { maxItems: limits.tagsPerMemory, description: 'Only memories carrying every one of these tags.' });
export const createdAfter = Type.String({ format: 'date-time', description: 'Only memories stored at or after this instant (ISO 8601).' });
export const createdBefore = Type.String({ format: 'date-time', description: 'Only memories stored before this instant (ISO 8601).' });
const query = Type.String({ maxLength: limits.queryChars, pattern: noNul, description: 'What to look for, in words: a question, a topic or keywords.' });

const newMemory = Type.Object(
  {
    content: Type.String({
      minLength: 1,
      maxLength: limits.contentChars,
      pattern: noNul,
      description: 'The memory itself: one self-contained statement, e.g. "Maria (the user\'s sister) is allergic to peanuts."',
    }),
    kind: Type.Optional({ ...kind, default: 'note' }),
    tags: Type.Optional(
      Type.Array(tag, { maxItems: limits.tagsPerMemory, default: [], description: 'Short labels for filtering, e.g. ["family", "health"].' }),
    ),
    key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: limits.keyChars,
        pattern: singleLine,
        description:
          'Optional stable name of what this memory is about, e.g. "user.home_city". Remembering a new memory with the same key in the same scope supersedes the current one automatically.',
      }),
    ),
    importance: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, default: 0.5, description: 'How much this matters, 0 to 1 (default 0.5); breaks ties in recall.' }),
    ),
    supersedes: Type.Optional(
      Type.Array(memoryId, {
        maxItems: limits.supersedesPerMemory,
        default: [],
        description: 'Ids of memories this one replaces (an updated fact). They stay in history but are no longer recalled.',
      }),
    ),
    source: Type.Optional(
      Type.Object(
        {
          conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: limits.sourceIdChars, pattern: singleLine })),
          intent_id: Type.Optional(Type.String({ minLength: 1, maxLength: limits.sourceIdChars, pattern: singleLine })),
        },
        { additionalProperties: false, default: {}, description: 'Where the memory came from.' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const rememberInput = Type.Object(
  {
    scope: Type.Optional(scopeField),
    memories: Type.Array(newMemory, {
      minItems: 1,
      maxItems: limits.batchSize,
      description: `One to ${limits.batchSize} memories, stored together or not at all.`,
    }),
  },
  { additionalProperties: false },
);

const message = Type.Object(
  {
    role: Type.Enum(['user', 'assistant', 'system', 'tool']),
    content: Type.String({ maxLength: limits.messageChars, pattern: noNul }),
  },
  { additionalProperties: false },
);

export const recallInput = Type.Object(
  {
    scope: Type.Optional(scopeField),
    query: Type.Optional(query),
    messages: Type.Optional(
      Type.Array(message, {
        maxItems: limits.messages,
        description: 'The current conversation, oldest first; used instead of (or with) query. The latest turns count most.',
      }),
    ),
    max_tokens: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: limits.recallMaxTokens,
        default: limits.recallDefaultTokens,
        description: `Token budget for the returned memories (default ${limits.recallDefaultTokens}).`,
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: limits.recallMaxResults, default: limits.recallDefaultResults, description: 'Most memories to return.' }),
    ),
    kinds: Type.Optional(kindsFilter),
    tags: Type.Optional(tagsFilter),
    created_after: Type.Optional(createdAfter),
    created_before: Type.Optional(createdBefore),
  },
  { additionalProperties: false },
);

export const searchInput = Type.Object(
  {
    scope: Type.Optional(scopeField),
    query: Type.Optional(Type.Optional({ ...query, description: 'Keywords; empty or absent lists the newest memories first.' })),
    kinds: Type.Optional(kindsFilter),
    tags: Type.Optional(tagsFilter),
    created_after: Type.Optional(createdAfter),
    created_before: Type.Optional(createdBefore),
    include_superseded: Type.Optional(Type.Boolean({ default: false, description: 'Also list memories replaced by newer ones.' })),
    include_forgotten: Type.Optional(Type.Boolean({ default: false, description: 'Also list memories forgotten softly.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.searchMaxPage, default: limits.searchDefaultPage, description: 'Page size.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: limits.cursorChars, description: 'next_cursor from the previous page of the same search.' })),
  },
  { additionalProperties: false },
);

export const forgetInput = Type.Object(
  {
    id: memoryId,
    hard: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'false (default): hide it from recall and search but keep it in history. true: erase its content for good.',
      }),
    ),
    reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: limits.reasonChars, pattern: singleLine, description: 'Why it was forgotten (kept with a soft forget).' }),
    ),
  },
  { additionalProperties: false },
);

export const idInput = Type.Object({ id: memoryId }, { additionalProperties: false });
