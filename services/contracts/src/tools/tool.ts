import type { Static, TObject } from 'typebox';

/** Who is calling: the agent DID whose wallet signs (X-Platform-Actor-DID, or PLATFORM_AGENT_DID for stdio). */
export interface ToolContext {
  callerDid: string | undefined;
}

/** MCP tool annotations (hints for the client: which tools only read, which can do harm). */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** True when the tool talks to something outside the engine (a chain). */
  openWorldHint: boolean;
}

export type HttpBinding =
  | { method: 'POST'; path: string }
  /** GET operations take path params and a query string; together they are the tool's input. */
  | { method: 'GET'; path: string; params?: TObject; query: TObject };

/**
 * One operation of the engine, served by every front door: an HTTP route, `tools/call` on POST /rpc and an MCP
 * tool over stdio. `tool` is the MCP name; operations without one are HTTP-only (the spec names nine tools).
 */
export interface Tool<S extends TObject = TObject> {
  operation: string;
  tool: string | undefined;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  http: HttpBinding;
  run(input: Static<S>, context: ToolContext): Promise<unknown>;
}

/** Erases a tool's input type so tools of different shapes sit in one table; each validates its own input first. */
export function defineTool<S extends TObject>(tool: Tool<S>): Tool {
  return tool as unknown as Tool;
}

export const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
