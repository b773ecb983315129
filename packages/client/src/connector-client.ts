import type { ConnectorConfirmation } from '@platform/kit/connector-confirmation';
import type { AgentKey } from './agent-key-type.ts';
import { ServiceSession, type SessionTransport } from './service-session.ts';

/** One tool of a connector as the catalogue shows it. */
export interface ConnectorToolView {
  name: string;
  description: string;
  scope: string;
  /** Acts outside the user's account: the call needs a confirmation. */
  consequential: boolean;
  /** JSON Schema of the arguments. */
  arguments: Record<string, unknown>;
}

export interface ConnectorView {
  id: string;
  name: string;
  description: string;
  scopes: { id: string; description: string }[];
  tools: ConnectorToolView[];
}

export interface ConnectionView {
  id: string;
  connector: string;
  status: 'connected' | 'needs_reconnect';
  scopes: string[];
  connected_at: string;
  updated_at: string;
}

export interface InvokeRequest {
  connector: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** For a consequential tool: the tool and the digest of exactly these arguments (`confirmationDigest`). */
  confirm?: ConnectorConfirmation;
}

/**
 * The connector service, for an agent: the catalogue, the user's connections, tool calls with the credential kept in
 * the service, and the connect flow's start. Authenticated by the DID handshake (`X-Connector-Agent`); the owner is
 * the user id in the key's DID label. Refusals are `ServiceCallError`s whose `details` carry the service's extra
 * members (`confirm` and `action` on a confirmation refusal, `connect` when the connector is not connected).
 *
 * @example const connector = new ConnectorClient({ baseUrl: 'http://127.0.0.1:9094', transportToken, key }); await connector.connections()
 */
export class ConnectorClient {
  readonly session: ServiceSession;

  constructor(options: { baseUrl: string; transportToken?: string; key: AgentKey; fetch?: typeof fetch; transport?: SessionTransport }) {
    this.session = new ServiceSession({ ...options, service: 'connector', principalHeader: 'X-Connector-Agent' });
  }
  /** Every connector, its scopes and its tools (the same for every caller: no principal token is sent). */
  catalogue(): Promise<{ connectors: ConnectorView[] }> {
    return this.session.requestWithoutPrincipal('GET', '/v1/connectors');
  }
  connections(): Promise<{ connections: ConnectionView[] }> {
    return this.session.request('GET', '/v1/connections');
  }
  invoke(request: InvokeRequest): Promise<{ connector: string; tool: string; result: Record<string, unknown> }> {
    return this.session.request('POST', '/v1/invoke', request);
  }
  /** Starts the OAuth flow: the user opens `authorization_url` in a browser before `expires_at`. */
  connect(connector: string): Promise<{ connector: string; authorization_url: string; expires_at: string }> {
    return this.session.request('POST', '/v1/connect', { connector });
  }
  /** Revokes the grant at the provider and removes the stored credential. */
  disconnect(connector: string): Promise<Record<string, unknown>> {
    return this.session.request('POST', '/v1/disconnect', { connector });
  }
}
