import type { JsonClient } from '@platform/kit/http/json-client';

/** A scope the connector asks the provider for: the provider's string, and what it lets the tools do. */
export interface ScopeDefinition {
  id: string;
  description: string;
}

/** One argument's JSON Schema (a subset: what the tools need, and what MCP clients understand). */
export interface ArgumentSchema {
  type: string;
  description: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: { type: string; format?: string; maxLength?: number };
}

/** JSON Schema of a tool's arguments (what the MCP registry will carry as `inputSchema`). */
export interface ArgumentsSchema {
  type: 'object';
  properties: Record<string, ArgumentSchema>;
  required: readonly string[];
  additionalProperties: false;
}

/** Where the providers are and how long a call may take: settings, so tests point them at a local stand-in. */
export interface ProviderSettings {
  /** Gmail v1 and Calendar v3 share it (https://www.googleapis.com). */
  googleApiUrl: string;
  timeoutMs: number;
}

/** What a tool runs with: the unsealed access token (never returned or logged) and the shared HTTP client. */
export interface ToolContext {
  accessToken: string;
  client: JsonClient;
  settings: ProviderSettings;
  /** The tool's own scope, so a provider's scope refusal can name it. */
  scope: string;
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
  /** One line saying what a confirmation of these arguments agrees to (shown in the confirmation refusal). */
  describe?: (args: Record<string, unknown>) => string;
  /** Calls the provider; returns only the scoped result (picked fields, never headers or tokens). */
  run: (context: ToolContext, args: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

/**
 * How a connector's provider runs OAuth 2.0 (authorization code with PKCE, refresh, RFC 7009 revocation). The URLs
 * are defaults: settings named after `provider` (`CONNECTOR_<provider>_AUTHORIZE_URL`, …) override them, so a test
 * points them at a local authorization server; the client id and secret are settings only.
 */
export interface OAuthDefinition {
  /** Upper-case name in the settings: `GOOGLE` reads CONNECTOR_GOOGLE_CLIENT_ID. Connectors may share one. */
  provider: string;
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl: string;
  /** Added to the authorization URL (Google: `access_type=offline` and `prompt=consent`, so a refresh token comes back). */
  authorizeParams: Readonly<Record<string, string>>;
  /** How the client authenticates at the token and revocation endpoints (RFC 6749 §2.3.1). */
  clientAuth: 'client_secret_post' | 'client_secret_basic';
}

/**
 * One connector: its definition and its tools' code in one place, so the catalogue route, the tool registry,
 * the gates and the calls all read the same scope and `consequential` flag. A new connector is a new folder under
 * `connectors/` with a `definition.ts`, listed in `index.ts`.
 */
export interface ConnectorDefinition {
  /** `[a-z0-9-]+`: it is bound into the vault's additional data and appears in routes. */
  id: string;
  name: string;
  description: string;
  scopes: readonly ScopeDefinition[];
  tools: readonly ToolDefinition[];
  oauth: OAuthDefinition;
}
