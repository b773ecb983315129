/** Every limit the memory server enforces; each has a test at and past its edge (test/limits.test.ts). */
export const limits = {
  contentChars: 8_000,
  tagsPerMemory: 20,
  tagChars: 64,
  keyChars: 128,
  scopeChars: 128,
  sourceIdChars: 128,
  /** Memories in one remember call. */
  batchSize: 100,
  supersedesPerMemory: 20,
  queryChars: 2_000,
  /** Conversation messages a recall may be given; only the most recent text is read (conversationChars). */
  messages: 50,
  messageChars: 8_000,
  conversationChars: 4_000,
  recallMaxTokens: 32_000,
  recallDefaultTokens: 1_500,
  recallMaxResults: 50,
  recallDefaultResults: 10,
  searchMaxPage: 100,
  searchDefaultPage: 20,
  /** A search cursor carries the query's stems and words: room for 64 long words in a two-byte script (search.ts trims past it). */
  cursorChars: 16_384,
  reasonChars: 500,
  /** Request body: a full batch of the largest memories, 4 bytes per character at worst, plus room. */
  bodyBytes: 4 * 1024 * 1024,
  /** Owners whose term statistics stay in memory (least recently active dropped first, loaded again on their next request). */
  ownersCached: 256,
} as const;
