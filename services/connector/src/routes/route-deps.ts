import type { ConnectionsRepository } from '../connections/connections.repository.ts';
import type { ConnectorDefinition } from '../connectors/types.ts';
import type { Invoker } from '../invoke/invoker.ts';
import type { ConnectFlow } from '../oauth/connect-flow.ts';
import type { Disconnector } from '../oauth/disconnector.ts';

/** What the routes are given; in a file of its own so the route files need not import the route list. */
export interface RouteDeps {
  connections: ConnectionsRepository;
  connectors: readonly ConnectorDefinition[];
  invoker: Invoker;
  connectFlow: ConnectFlow;
  disconnector: Disconnector;
}
