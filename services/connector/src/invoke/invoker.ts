import { ServiceError } from '@platform/kit/errors';
import type { JsonClient } from '@platform/kit/http/json-client';
import type { Logger } from 'pino';
import type { ConnectionsRepository } from '../connections/connections.repository.ts';
import { CredentialRefused } from '../connectors/provider-errors.ts';
import type { ConnectorDefinition, ProviderSettings } from '../connectors/types.ts';
import { validateArguments } from './arguments.ts';
import { type Confirmation, checkConfirmation } from './confirmation.ts';

export interface InvokeRequest {
  connector: string;
  tool: string;
  arguments: Record<string, unknown>;
  confirm?: Confirmation;
}

export interface InvokerDeps {
  connections: ConnectionsRepository;
  connectors: readonly ConnectorDefinition[];
  client: JsonClient;
  settings: ProviderSettings;
  logger: Logger;
}

const connectRoute = 'POST /v1/connect';

/**
 * Runs one tool for one owner, gates first: known connector and tool, valid arguments, a live connection, the
 * tool's scope granted, a confirmation for consequential tools; then the credential is unsealed and the tool runs.
 */
export class Invoker {
  readonly #deps: InvokerDeps;

  constructor(deps: InvokerDeps) {
    this.#deps = deps;
  }

  async invoke(owner: string, request: InvokeRequest): Promise<Record<string, unknown>> {
    const connector = this.#deps.connectors.find((candidate) => candidate.id === request.connector);
    if (!connector) throw new ServiceError('not_found', `no connector "${request.connector}"; GET /v1/connectors lists them`);
    const tool = connector.tools.find((candidate) => candidate.name === request.tool);
    if (!tool) throw new ServiceError('not_found', `connector ${connector.id} has no tool "${request.tool}"; GET /v1/connectors lists them`);
    validateArguments(tool, request.arguments);
    // One select: the row's status and scopes gate the call; its credential is decrypted only once every gate passed.
    const opened = await this.#deps.connections.find(owner, connector.id);
    if (!opened) {
      throw new ServiceError(
        'conflict',
        `${connector.id} is not connected for this user; connect it first with ${connectRoute} {"connector": "${connector.id}"}`,
        {
          details: { reason: 'not_connected', connect: connectRoute },
        },
      );
    }
    if (opened.connection.status === 'needs_reconnect') {
      throw new ServiceError('conflict', `the ${connector.id} connection needs reconnecting (the provider refused its credential); call ${connectRoute}`, {
        details: { reason: 'needs_reconnect', connect: connectRoute },
      });
    }
    if (!opened.connection.scopes.includes(tool.scope)) {
      throw new ServiceError('forbidden', `${tool.name} needs scope ${tool.scope}, which this connection was not granted; reconnect granting it`, {
        details: { reason: 'scope_not_granted', scope: tool.scope },
      });
    }
    checkConfirmation(connector.id, tool, request.arguments, request.confirm);
    const context = { accessToken: opened.unseal().accessToken, client: this.#deps.client, settings: this.#deps.settings, scope: tool.scope };
    try {
      return await tool.run(context, request.arguments);
    } catch (error) {
      if (error instanceof CredentialRefused) {
        await this.#deps.connections.setStatus(owner, connector.id, 'needs_reconnect');
        // Connection id only: the reason is the provider's, the token stays out of the log.
        this.#deps.logger.warn({ connection: opened.connection.id, connector: connector.id }, 'provider refused the credential; marked needs_reconnect');
      }
      throw error;
    }
  }
}
