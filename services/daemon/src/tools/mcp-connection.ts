import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { confirmationDigest, confirmMetaKey, connectorToolMetaKey } from '@platform/kit/connector-confirmation';
import { traceCarrier, tracedFetch } from '@platform/kit/observability/tracing';
import type { Logger } from 'pino';
import type { AgentIdentity } from '../identity/agent-identity.ts';
import type { McpServerSetting } from './mcp-server-settings.ts';
import { boundedResult, stepKey, type ToolCallContext, type ToolInfo, type ToolOutcome, type ToolProvider } from './tool-types.ts';

/** How to reach one MCP server: Streamable HTTP (with headers) or a child process over stdio. */
export type McpEndpoint =
  | { transport: 'http'; url: string; headers: Record<string, string> }
  | { transport: 'stdio'; command: string; args: readonly string[]; env: Readonly<Record<string, string>> };

interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean };
  _meta?: Record<string, unknown>;
}

/** What the daemon needs to confirm calls of this tool, when the server says it refuses unconfirmed ones. */
function withConfirmation(tool: McpTool): Pick<ToolInfo, 'confirmation'> {
  const meta = tool._meta?.[connectorToolMetaKey] as { connector?: unknown; tool?: unknown; confirmation?: unknown } | undefined;
  if (meta?.confirmation !== 'required') return {};
  // Asked for without saying what to confirm, it is still gated; its digest then names nothing the server accepts.
  return { confirmation: { connector: typeof meta.connector === 'string' ? meta.connector : '', tool: typeof meta.tool === 'string' ? meta.tool : tool.name } };
}

/**
 * One MCP server's tools, through the protocol's own SDK client. The SDK is loaded on first use, not at start: an
 * idle daemon does not pay for it. A connection that fails is dropped and made again on the next call.
 */
export class McpToolProvider implements ToolProvider {
  readonly server: string;
  readonly describe: ToolProvider['describe'];
  readonly #endpoint: McpEndpoint;
  readonly #logger: Logger;
  readonly #timeoutMs: number;
  readonly #keyed: Readonly<Record<string, string>>;
  readonly #rerunSafe: (tool: string) => boolean;
  #client: Promise<Client> | undefined;
  #tools: ToolInfo[] | undefined;

  /**
   * `idempotencyKeys`: tools whose named argument the daemon fills with the step's key when the plan leaves it out.
   * `rerunSafe`: tools the server makes harmless to repeat (beyond those it marks read-only).
   */
  constructor(options: {
    server: string;
    endpoint: McpEndpoint;
    logger: Logger;
    timeoutMs: number;
    idempotencyKeys?: Record<string, string>;
    rerunSafe?: (tool: string) => boolean;
  }) {
    this.server = options.server;
    this.#endpoint = options.endpoint;
    this.#logger = options.logger;
    this.#timeoutMs = options.timeoutMs;
    this.#keyed = options.idempotencyKeys ?? {};
    this.#rerunSafe = options.rerunSafe ?? (() => false);
    this.describe =
      options.endpoint.transport === 'http'
        ? { transport: 'http', url: redactUrl(options.endpoint.url) }
        : { transport: 'stdio', command: options.endpoint.command };
  }

  async list(): Promise<ToolInfo[]> {
    if (this.#tools) return this.#tools;
    const client = await this.#connect();
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.#timeoutMs });
      tools.push(...(page.tools as McpTool[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < 1_000);
    this.#tools = tools.map((tool) => ({
      name: `${this.server}.${tool.name}`,
      server: this.server,
      remoteName: tool.name,
      description: tool.description ?? '',
      inputSchema: tool.inputSchema,
      readOnly: tool.annotations?.readOnlyHint === true,
      rerunSafe: tool.annotations?.readOnlyHint === true || this.#keyed[tool.name] !== undefined || this.#rerunSafe(tool.name),
      ...(this.#keyed[tool.name] ? { keyArgument: this.#keyed[tool.name] } : {}),
      ...withConfirmation(tool),
    }));
    return this.#tools;
  }

  async call(tool: ToolInfo, args: Record<string, unknown>, context: ToolCallContext): Promise<ToolOutcome> {
    const client = await this.#connect();
    if (tool.keyArgument !== undefined && args[tool.keyArgument] === undefined) args = { ...args, [tool.keyArgument]: stepKey(context) };
    let result: { content?: unknown; structuredContent?: unknown; isError?: unknown };
    // Only after the user approved this step's gate, and over exactly the arguments sent: the server checks the digest.
    const confirm = context.approved === true ? tool.confirmation : undefined;
    // Over stdio there are no headers: the tool call's trace context travels in `_meta` (kit trace-meta.ts).
    const trace = this.#endpoint.transport === 'stdio' ? traceCarrier() : undefined;
    const confirmation = confirm ? { [confirmMetaKey]: { tool: confirm.tool, digest: confirmationDigest(confirm.connector, confirm.tool, args) } } : undefined;
    const meta = confirmation || trace ? { _meta: { ...confirmation, ...trace } } : {};
    try {
      result = (await client.callTool({ name: tool.remoteName, arguments: args, ...meta }, undefined, {
        signal: context.signal,
        timeout: this.#timeoutMs,
      })) as typeof result;
    } catch (error) {
      // A broken connection is made again next time; the call itself is reported, not retried (it may have run).
      this.#reset();
      throw error;
    }
    const text = textOf(result.content);
    if (result.isError === true) return { ok: false, error: text || 'the tool failed' };
    return { ok: true, result: boundedResult(result.structuredContent ?? parseText(text)) };
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#reset();
    if (client) await (await client.catch(() => undefined))?.close().catch(() => undefined);
  }

  #reset(): void {
    this.#client = undefined;
    this.#tools = undefined;
  }

  #connect(): Promise<Client> {
    this.#client ??= this.#open().catch((error: unknown) => {
      this.#client = undefined;
      throw error;
    });
    return this.#client;
  }

  async #open(): Promise<Client> {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const client = new Client({ name: 'platform-daemon', version: '0.1.0' });
    client.onerror = (error) => this.#logger.debug({ err: error, server: this.server }, 'MCP transport error');
    const endpoint = this.#endpoint;
    if (endpoint.transport === 'http') {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      // tracedFetch: each MCP request is a client span of the tool call and carries its traceparent.
      await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers }, fetch: tracedFetch }), {
        timeout: this.#timeoutMs,
      });
    } else {
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const transport = new StdioClientTransport({ command: endpoint.command, args: [...endpoint.args], env: { ...endpoint.env }, stderr: 'pipe' });
      // Read the child's stderr so it never blocks on a full pipe; it is the server's log, worth keeping at debug.
      transport.stderr?.on('data', (chunk: Buffer) =>
        this.#logger.debug({ server: this.server, stderr: chunk.toString('utf8').slice(0, 2_000) }, 'MCP server log'),
      );
      await client.connect(transport, { timeout: this.#timeoutMs });
    }
    client.onclose = () => this.#reset();
    return client;
  }
}

/** The daemon's key for a stdio child that asked for it (`agent_key`): the seed and the user its DID is made from. */
function agentKeyEnv(identity: AgentIdentity): Record<string, string> {
  return { PLATFORM_AGENT_KEY: identity.agentKey.seedHex, PLATFORM_AGENT_USER_ID: identity.userId };
}

/** An MCP provider from a DAEMON_MCP_SERVERS entry. */
export function providerFromSetting(setting: McpServerSetting, logger: Logger, timeoutMs: number, identity: AgentIdentity): McpToolProvider {
  const endpoint: McpEndpoint =
    setting.transport === 'http'
      ? { transport: 'http', url: setting.url, headers: setting.token === '' ? {} : { authorization: `Bearer ${setting.token}` } }
      : { transport: 'stdio', command: setting.command, args: setting.args, env: { ...setting.env, ...(setting.agentKey ? agentKeyEnv(identity) : {}) } };
  return new McpToolProvider({ server: setting.name, endpoint, logger, timeoutMs });
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter(
      (part): part is { type: 'text'; text: string } => typeof part === 'object' && part !== null && part.type === 'text' && typeof part.text === 'string',
    )
    .map((part) => part.text)
    .join('\n');
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A URL without user, password, query or fragment: safe to show. */
export function redactUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
