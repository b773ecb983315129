import type { Logger } from 'pino';
import type { ToolCatalogue } from '../tools/tool-catalogue.ts';
import type { ToolInfo } from '../tools/tool-types.ts';

/**
 * The chat's long-term memory, through the memory server's own MCP tools (`memory.recall`, `memory.remember`). When
 * no memory server is configured, or it cannot be reached, a turn goes on without memories and says so in the log.
 */
export class MemoryContext {
  readonly #tools: ToolCatalogue;
  readonly #logger: Logger;

  constructor(tools: ToolCatalogue, logger: Logger) {
    this.#tools = tools;
    this.#logger = logger;
  }

  async #tool(name: string): Promise<ToolInfo | undefined> {
    if (!this.#tools.providers.some((provider) => provider.server === 'memory')) return undefined;
    return (await this.#tools.snapshot()).tools.get(name);
  }

  /** Memories relevant to the message and the recent conversation, most relevant first. */
  async recall(
    query: string,
    history: readonly { role: 'user' | 'assistant'; text: string }[],
    options: { limit: number; maxTokens: number; conversationId: string },
  ): Promise<string[]> {
    const tool = await this.#tool('memory.recall');
    if (tool === undefined) return [];
    const outcome = await this.#tools.call(
      tool,
      {
        query: query.slice(0, 2_000),
        messages: history.slice(-6).map((turn) => ({ role: turn.role, content: turn.text.slice(0, 8_000) })),
        limit: options.limit,
        max_tokens: options.maxTokens,
      },
      { intentId: 'chat', nodeId: 'recall', conversationId: options.conversationId, signal: new AbortController().signal },
    );
    if (!outcome.ok) {
      this.#logger.warn({ error: outcome.error }, 'recall failed; answering without memories');
      return [];
    }
    const memories = (outcome.result as { memories?: { content?: unknown }[] })?.memories ?? [];
    return memories.map((memory) => memory.content).filter((content): content is string => typeof content === 'string');
  }

  /** Stores durable facts from a turn; answers how many were new. */
  async remember(facts: readonly string[], conversationId: string): Promise<number> {
    const clean = [...new Set(facts.map((fact) => fact.trim()).filter((fact) => fact !== '' && fact.length <= 8_000))];
    if (clean.length === 0) return 0;
    const tool = await this.#tool('memory.remember');
    if (tool === undefined) return 0;
    const outcome = await this.#tools.call(
      tool,
      { memories: clean.map((content) => ({ content, kind: 'fact', source: { conversation_id: conversationId.slice(0, 128) } })) },
      { intentId: 'chat', nodeId: 'remember', conversationId, signal: new AbortController().signal },
    );
    if (!outcome.ok) {
      this.#logger.warn({ error: outcome.error }, 'remember failed');
      return 0;
    }
    const stored = (outcome.result as { memories?: { status?: unknown }[] })?.memories ?? [];
    return stored.filter((memory) => memory.status !== 'duplicate').length;
  }
}
