import type { Static, TObject } from 'typebox';

/** MCP tool annotations: hints for clients about which tools only read and which remove things. */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

/** Who a tool runs for: taken from the verified bearer by the route, never from the arguments. */
export interface ToolContext {
  owner: string;
}

/** One operation, served as an MCP tool on /mcp and as `POST /v1/<name>`. */
export interface MemoryTool<S extends TObject = TObject> {
  name: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  run(input: Static<S>, context: ToolContext): Promise<unknown>;
  /** The text an LLM reads in the MCP result; JSON of the result when absent. */
  text?(result: unknown): string;
}

/** Erases a tool's input type so tools of different shapes sit in one table; each input is validated first. */
export function defineTool<S extends TObject>(tool: MemoryTool<S>): MemoryTool {
  return tool as unknown as MemoryTool;
}
