import { ConfigError } from '@platform/kit/config';
import { type ConnectorToolMeta, connectorToolMetaKey } from '@platform/kit/connector-confirmation';
import { connectors as catalogue } from '../connectors/index.ts';
import type { ConnectorDefinition, ToolDefinition } from '../connectors/types.ts';

/**
 * The tool registry: what the stdio proxy serves as MCP `tools/list`, generated from the connector definitions
 * (`npx platform connector registry > tools.json`). The proxy reads exactly this format and version and refuses
 * anything else, so a registry written by another release is named as such instead of half-understood.
 */
export const registryFormat = 'platform-connector-tools';
export const registryVersion = 1;

/** One MCP tool, as `tools/list` carries it. */
export interface RegistryTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  _meta: { [connectorToolMetaKey]: ConnectorToolMeta };
}

export interface ToolRegistry {
  format: typeof registryFormat;
  version: typeof registryVersion;
  tools: RegistryTool[];
}

/** MCP clients pass tool names to model APIs, which take `[a-zA-Z0-9_-]{1,64}`. */
const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;
const connectToolSuffix = 'connect';

/**
 * `<connector>_<tool>`: stable whatever other connectors are added later, and unambiguous (connector ids have no
 * `_`, so the first `_` splits them). A connector's own `connect` tool is `<connector>_connect`.
 */
export function registryToolName(connector: string, tool: string): string {
  return `${connector}_${tool}`;
}

function connectorTool(connector: ConnectorDefinition, tool: ToolDefinition): RegistryTool {
  const confirmation = tool.consequential ? 'required' : 'none';
  return {
    name: registryToolName(connector.id, tool.name),
    title: `${connector.name}: ${tool.name.replaceAll('_', ' ')}`,
    description: tool.consequential
      ? `${tool.description} It acts outside the user's account, so the call needs the user's confirmation of exactly these arguments.`
      : tool.description,
    inputSchema: tool.arguments as unknown as Record<string, unknown>,
    // Non-consequential tools only read today; consequential ones reach people outside the account and cannot be undone.
    annotations: tool.consequential
      ? { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }
      : { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    _meta: { [connectorToolMetaKey]: { connector: connector.id, tool: tool.name, confirmation } },
  };
}

/**
 * The tool that starts the OAuth flow from a chat: it answers the authorization URL for the user to open. Marked
 * read-only: it changes nothing the user has until they consent at the provider, and that consent page is itself the
 * confirmation (gating this call would ask twice).
 */
function connectTool(connector: ConnectorDefinition): RegistryTool {
  return {
    name: registryToolName(connector.id, connectToolSuffix),
    title: `Connect ${connector.name}`,
    description: `Start connecting the user's ${connector.name} account: answers an authorization URL the user opens in a browser to grant access (${connector.scopes.map((scope) => scope.description).join('; ')}). The other ${connector.id} tools work once the user has granted it.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    _meta: { [connectorToolMetaKey]: { connector: connector.id, action: 'connect', confirmation: 'none' } },
  };
}

/**
 * The registry for `list` (every connector by default): each connector's tools, then its connect tool.
 * Throws when two tools would share a name or a name is not one model APIs accept: a definition to fix, not a
 * file to write.
 *
 * @example process.stdout.write(`${JSON.stringify(generateRegistry(), null, 2)}\n`)
 */
export function generateRegistry(list: readonly ConnectorDefinition[] = catalogue): ToolRegistry {
  const tools: RegistryTool[] = [];
  for (const connector of list) {
    if (connector.id.includes('_')) throw new Error(`connector id "${connector.id}" has "_", which separates connector and tool in registry names`);
    tools.push(...connector.tools.map((tool) => connectorTool(connector, tool)), connectTool(connector));
  }
  const names = new Set<string>();
  for (const tool of tools) {
    if (!toolNamePattern.test(tool.name)) throw new Error(`registry tool name "${tool.name}" is not 1 to 64 of a-z A-Z 0-9 _ -`);
    if (names.has(tool.name))
      throw new Error(`registry tool name "${tool.name}" is used twice (a tool named "${connectToolSuffix}" clashes with the connect tool)`);
    names.add(tool.name);
  }
  return { format: registryFormat, version: registryVersion, tools };
}

/** Why a registry file cannot be used: one line naming the file and the problem (a setting's problem, so a ConfigError). */
export class RegistryError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = 'RegistryError';
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a registry file's text: the format and version must be this release's, and every tool must say which
 * connector it maps to. `source` names the file in errors.
 */
export function parseRegistry(text: string, source: string): ToolRegistry {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RegistryError(`${source} is not JSON; write it with \`npx platform connector registry > ${source}\``);
  }
  if (!isObject(parsed) || parsed.format !== registryFormat)
    throw new RegistryError(`${source} is not a connector tool registry (its "format" must be "${registryFormat}")`);
  if (parsed.version !== registryVersion)
    throw new RegistryError(
      `${source} is registry version ${JSON.stringify(parsed.version)}; this proxy reads version ${registryVersion} only: generate it again with \`npx platform connector registry\``,
    );
  if (!Array.isArray(parsed.tools)) throw new RegistryError(`${source} has no "tools" array`);
  const names = new Set<string>();
  for (const [index, tool] of parsed.tools.entries()) {
    const where = `${source} tools[${index}]`;
    if (!isObject(tool) || typeof tool.name !== 'string' || !toolNamePattern.test(tool.name))
      throw new RegistryError(`${where} needs a name of 1 to 64 of a-z A-Z 0-9 _ -`);
    if (names.has(tool.name)) throw new RegistryError(`${where} repeats the name "${tool.name}"`);
    names.add(tool.name);
    if (typeof tool.description !== 'string' || !isObject(tool.inputSchema) || tool.inputSchema.type !== 'object')
      throw new RegistryError(`${where} (${tool.name}) needs a description and an object inputSchema`);
    const meta = isObject(tool._meta) ? tool._meta[connectorToolMetaKey] : undefined;
    const mapsTo = isObject(meta) && typeof meta.connector === 'string' && (typeof meta.tool === 'string' || meta.action === 'connect');
    if (!mapsTo || (meta.confirmation !== 'required' && meta.confirmation !== 'none'))
      throw new RegistryError(`${where} (${tool.name}) needs _meta["${connectorToolMetaKey}"] with connector, tool (or action "connect") and confirmation`);
  }
  return parsed as unknown as ToolRegistry;
}
