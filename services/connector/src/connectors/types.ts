/** A scope the connector asks the provider for: the provider's string, and what it lets the tools do. */
export interface ScopeDefinition {
  id: string;
  description: string;
}

/** JSON Schema of a tool's arguments (what the MCP registry will carry as `inputSchema`). */
export interface ArgumentsSchema {
  type: 'object';
  properties: Record<string, { type: string; description: string; items?: { type: string } }>;
  required: readonly string[];
  additionalProperties: false;
}

export interface ToolDefinition {
  /** Unique within the connector; `[a-z_]+`, valid as an MCP tool name. */
  name: string;
  description: string;
  /** The one scope the tool needs; the call is refused unless the connection was granted it. */
  scope: string;
  /** Whether the tool acts outside the user's account (sends, invites): such calls need an explicit confirmation. */
  consequential: boolean;
  arguments: ArgumentsSchema;
}

/**
 * One connector: data only, so the catalogue route, the tool registry and the OAuth flow all read the same
 * definition. A new connector is a new folder under `connectors/` with a `definition.ts`, listed in `index.ts`.
 */
export interface ConnectorDefinition {
  /** `[a-z0-9-]+`: it is bound into the vault's additional data and appears in routes. */
  id: string;
  name: string;
  description: string;
  scopes: readonly ScopeDefinition[];
  tools: readonly ToolDefinition[];
}
