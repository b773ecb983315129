/** The daemon's limits; each is checked at the door and tested at and past its edge. */
export const limits = {
  /** Request bodies (413 above). A scheduler wake carries up to 16 KiB of payload and 16 KiB of message. */
  bodyBytes: 64 * 1024,
  /** Chat messages and intent prose, in characters. */
  messageChars: 16_000,
  /** A gate answer's text. */
  answerChars: 2_000,
  /** A cancel reason. */
  reasonChars: 500,
  /** Conversation ids (the scheduler allows 200 for its conversation_id). */
  conversationIdChars: 200,
  /** Idempotency-Key of a wake. */
  wakeKeyChars: 400,
  /** Transcript turns shown to the chat model, and their characters. */
  historyTurns: 20,
  historyChars: 12_000,
  /** Memories recalled into a chat turn. */
  recallLimit: 8,
  recallTokens: 1_200,
  /** Intents per page of GET /intents, entries per page of a transcript. */
  pageSize: 200,
} as const;
