import type { Clock } from '@platform/kit/clock';
import { toolCallAttributes } from '@platform/kit/observability/gen-ai-spans';
import { inSpan, SpanStatusCode } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import type { DaemonConfig } from '../config.ts';
import type { AgentIdentity } from '../identity/agent-identity.ts';
import { alarmTools, paymentTools } from './builtin-tools.ts';
import { marketTools } from './market-tools.ts';
import { McpToolProvider, providerFromSetting } from './mcp-connection.ts';
import type { ToolCallContext, ToolInfo, ToolOutcome, ToolProvider } from './tool-types.ts';

export interface CatalogueSnapshot {
  tools: Map<string, ToolInfo>;
  /** Servers that could not be reached: their tools are missing from this snapshot. */
  unavailable: { server: string; error: string }[];
}

/**
 * Every tool the daemon really has: the built-ins over the scheduler and settlement, and the tools of each MCP server
 * (memory, contract engine, and the ones in DAEMON_MCP_SERVERS, where the connector arrives). A service left unset
 * contributes nothing; one that cannot be reached is named, and its tools are absent until it answers again.
 */
export class ToolCatalogue {
  readonly providers: readonly ToolProvider[];
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #clock: Clock;

  constructor(providers: readonly ToolProvider[], options: { logger: Logger; timeoutMs: number; clock: Clock }) {
    this.providers = providers;
    this.#logger = options.logger;
    this.#timeoutMs = options.timeoutMs;
    this.#clock = options.clock;
  }

  async snapshot(): Promise<CatalogueSnapshot> {
    const tools = new Map<string, ToolInfo>();
    const unavailable: CatalogueSnapshot['unavailable'] = [];
    const lists = await Promise.allSettled(this.providers.map((provider) => provider.list()));
    for (const [index, listed] of lists.entries()) {
      const provider = this.providers[index] as ToolProvider;
      if (listed.status === 'fulfilled') for (const tool of listed.value) tools.set(tool.name, tool);
      else {
        const error = listed.reason instanceof Error ? listed.reason.message : String(listed.reason);
        this.#logger.warn({ server: provider.server, err: listed.reason }, 'tool server unavailable');
        unavailable.push({ server: provider.server, error });
      }
    }
    return { tools, unavailable };
  }

  /** Runs a tool; a failure of the server or the call is an outcome with a readable error, never a throw. */
  call(tool: ToolInfo, args: Record<string, unknown>, context: ToolCallContext): Promise<ToolOutcome> {
    // A span per tool call (GenAI's execute_tool), failed when the outcome is a failure.
    return inSpan(`execute_tool ${tool.name}`, { attributes: toolCallAttributes(tool) }, async (span) => {
      const outcome = await this.#call(tool, args, context);
      if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.slice(0, 500) });
      return outcome;
    });
  }

  async #call(tool: ToolInfo, args: Record<string, unknown>, context: ToolCallContext): Promise<ToolOutcome> {
    const provider = this.providers.find((candidate) => candidate.server === tool.server);
    if (provider === undefined) return { ok: false, error: `no server ${tool.server}` };
    // The timeout runs on the injected clock, so a test moves time instead of waiting for it.
    const timeout = new AbortController();
    const done = new AbortController();
    void this.#clock.sleep(this.#timeoutMs, done.signal).then(() => {
      if (!done.signal.aborted) timeout.abort();
    });
    const signal = AbortSignal.any([timeout.signal, context.signal]);
    try {
      return await Promise.race([provider.call(tool, args, { ...context, signal }), aborted(signal)]);
    } catch (error) {
      if (timeout.signal.aborted) return { ok: false, error: `${tool.name} did not answer within ${this.#timeoutMs} ms` };
      if (context.signal.aborted) return { ok: false, error: `${tool.name} was abandoned` };
      this.#logger.warn({ err: error, tool: tool.name }, 'tool call failed');
      return { ok: false, error: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      done.abort('settled');
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.providers.map((provider) => provider.close()));
  }
}

/** Rejects when the signal aborts: a provider that ignores its signal cannot hold the walk. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(new Error('aborted'));
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
}

/** The providers the settings ask for, in a fixed order (built-ins, memory, contracts, then the extra servers). */
export function providersFor(config: DaemonConfig, identity: AgentIdentity, logger: Logger): ToolProvider[] {
  const providers: ToolProvider[] = [];
  const bearer = (token: string): Record<string, string> => (token === '' ? {} : { authorization: `Bearer ${token}` });
  if (config.scheduler) providers.push(alarmTools(config.scheduler, identity.agentKey));
  if (config.settlement) providers.push(paymentTools(config.settlement, identity.agentKey));
  if (config.marketplace) providers.push(marketTools(config.marketplace, identity.agentKey));
  if (config.memory)
    providers.push(
      new McpToolProvider({
        server: 'memory',
        endpoint: { transport: 'http', url: `${config.memory.url}/mcp`, headers: bearer(config.memory.token) },
        logger,
        timeoutMs: config.toolTimeoutMs,
        // remember returns the existing memory for a duplicate, forget of a forgotten memory changes nothing.
        rerunSafe: () => true,
      }),
    );
  if (config.contracts)
    providers.push(
      new McpToolProvider({
        server: 'contracts',
        // The engine's JSON-RPC door speaks MCP's tools/list and tools/call; its wallet is the caller's DID.
        endpoint: {
          transport: 'http',
          url: `${config.contracts.url}/rpc`,
          headers: { ...bearer(config.contracts.token), 'x-platform-actor-did': identity.did },
        },
        logger,
        timeoutMs: config.toolTimeoutMs,
        idempotencyKeys: { tachyon_deploy: 'idempotency_key' },
      }),
    );
  for (const setting of config.mcpServers) providers.push(providerFromSetting(setting, logger, config.toolTimeoutMs, identity));
  return providers;
}
