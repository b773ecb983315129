/** A tool the agent can call, from one of its servers, with what the daemon's policy needs to know about it. */
export interface ToolInfo {
  /** `<server>.<tool>`: unique across servers. */
  name: string;
  server: string;
  /** The tool's own name on its server. */
  remoteName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server says the tool only reads (MCP `readOnlyHint`). */
  readOnly: boolean;
  /** Running it again after a crash left its outcome unknown is harmless (it reads, or it is keyed by the step). */
  rerunSafe: boolean;
  /** The argument the daemon fills with the step's idempotency key when the plan leaves it out. */
  keyArgument?: string;
  /**
   * The server refuses the call unless it carries the user's confirmation of exactly these arguments (MCP
   * `_meta["platform/connector"].confirmation` "required"): the daemon always gates it and, once the gate is approved,
   * sends the digest of `{connector, tool, arguments}` in the call's `_meta["platform/confirm"]`.
   */
  confirmation?: { connector: string; tool: string };
}

/** What a step's tool call needs from the walk. */
export interface ToolCallContext {
  intentId: string;
  nodeId: string;
  conversationId: string;
  signal: AbortSignal;
  /** The user approved the gate guarding this step: only then may a call carry a confirmation. */
  approved?: boolean;
}

export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: string };

/** Everything that serves tools: an MCP server or a set of built-ins over one of our services. */
export interface ToolProvider {
  readonly server: string;
  /** What the provider connects to, for /me (never a secret). */
  readonly describe: { transport: 'http' | 'stdio' | 'builtin'; url?: string; command?: string };
  list(): Promise<ToolInfo[]>;
  call(tool: ToolInfo, args: Record<string, unknown>, context: ToolCallContext): Promise<ToolOutcome>;
  close(): Promise<void>;
}

/** A step's idempotency key: the same for every run of that step of that intent, at most 97 characters. */
export function stepKey(context: Pick<ToolCallContext, 'intentId' | 'nodeId'>): string {
  return `${context.intentId}:${context.nodeId}`;
}

/** Tool results can be large (ABIs, bytecode); what the journal and the model see is cut to this many characters of JSON. */
export const resultCharLimit = 32_000;

/** A result small enough to journal: the value itself, or its JSON text cut with a note. */
export function boundedResult(result: unknown): unknown {
  const text = JSON.stringify(result) ?? 'null';
  if (text.length <= resultCharLimit) return result;
  return { truncated: true, original_chars: text.length, preview: text.slice(0, resultCharLimit) };
}
