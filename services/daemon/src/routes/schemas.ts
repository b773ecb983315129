import { Type } from 'typebox';
import { limits } from '../limits.ts';

/** Free text without control characters other than tab and newline. */
const text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f]*$', description });

export const conversationId = Type.String({
  minLength: 1,
  maxLength: limits.conversationIdChars,
  pattern: '^[^\\u0000-\\u001f\\u007f]+$',
  description: 'A conversation, any single-line text; "default" when omitted',
});

export const intentIdParam = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The intent id: SHA-256 hex of its first envelope' }) });

const prose = text(limits.messageChars, 'What the user wants done');

export const proseBody = Type.Object({ prose }, { additionalProperties: false });

export const asyncBody = Type.Object(
  {
    prose,
    strategy: Type.Optional(
      Type.Union([Type.Literal('enqueue'), Type.Literal('reject'), Type.Literal('interrupt')], { description: 'What to do while a walk is in flight' }),
    ),
  },
  { additionalProperties: false },
);

export const chatBody = Type.Object(
  { message: text(limits.messageChars, 'The user’s message'), conversation_id: Type.Optional(conversationId) },
  { additionalProperties: false },
);

export const answerBody = Type.Object(
  {
    approved: Type.Boolean({ description: 'true approves; false denies' }),
    answer: Type.Optional(Type.String({ maxLength: limits.answerChars, description: 'The chosen option or the person’s words' })),
  },
  { additionalProperties: false },
);

export const cancelBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: limits.reasonChars })) }, { additionalProperties: false });
