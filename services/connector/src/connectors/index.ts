import type { ConnectorDefinition } from './types.ts';
import { workspaceConnector } from './workspace/definition.ts';

/** Every connector the service offers; a second connector is its folder plus one line here. */
export const connectors: readonly ConnectorDefinition[] = [workspaceConnector];

/** Checks the invariants the rest of the service relies on; run at start and by the tests. */
export function checkConnectors(list: readonly ConnectorDefinition[]): void {
  const ids = new Set<string>();
  for (const connector of list) {
    if (!/^[a-z0-9-]{1,64}$/.test(connector.id)) throw new Error(`connector id "${connector.id}" must be 1 to 64 of a-z 0-9 -`);
    if (ids.has(connector.id)) throw new Error(`connector id "${connector.id}" is listed twice`);
    ids.add(connector.id);
    if (!/^[A-Z][A-Z0-9_]{0,31}$/.test(connector.oauth.provider))
      throw new Error(`${connector.id}: oauth.provider "${connector.oauth.provider}" must be A-Z 0-9 _ (it names settings)`);
    const scopes = new Set(connector.scopes.map((scope) => scope.id));
    const names = new Set<string>();
    for (const tool of connector.tools) {
      if (!/^[a-z][a-z_]{0,63}$/.test(tool.name) || names.has(tool.name)) throw new Error(`${connector.id}: tool name "${tool.name}" is bad or repeated`);
      names.add(tool.name);
      if (!scopes.has(tool.scope)) throw new Error(`${connector.id}.${tool.name} needs scope ${tool.scope}, which the connector does not ask for`);
    }
  }
}

export function connectorById(id: string): ConnectorDefinition | undefined {
  return connectors.find((connector) => connector.id === id);
}
