import { ServiceError } from '@platform/kit/errors';
import type { JsonClient } from '@platform/kit/http/json-client';
import type { Logger } from 'pino';
import { needsReconnect, notConnected } from '../connections/connection-errors.ts';
import type { ConnectionsRepository } from '../connections/connections.repository.ts';
import type { Credential } from '../connections/credential.ts';
import { CredentialRefused } from '../connectors/provider-errors.ts';
import type { ConnectorDefinition, ProviderSettings, ToolDefinition } from '../connectors/types.ts';
import type { ConnectorMetrics, ToolOutcome } from '../metrics.ts';
import type { Refresher } from '../oauth/refresher.ts';
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
  refresher: Refresher;
  metrics: ConnectorMetrics;
}

/** Where a call was when it failed: at the gates (the caller's to fix) or past them, at the provider. */
interface Stage {
  atProvider: boolean;
}

/**
 * Runs one tool for one owner, gates first: known connector and tool, valid arguments, a live connection, the
 * tool's scope granted, a confirmation for consequential tools; then the credential is unsealed (and refreshed if it
 * expires soon) and the tool runs. A token the provider refuses is refreshed once and the tool tried once more.
 */
export class Invoker {
  readonly #deps: InvokerDeps;

  constructor(deps: InvokerDeps) {
    this.#deps = deps;
  }

  /** Runs the call and counts it by tool and outcome (`connector_tool_calls_total`). */
  async invoke(owner: string, request: InvokeRequest): Promise<Record<string, unknown>> {
    const stage: Stage = { atProvider: false };
    try {
      const result = await this.#invoke(owner, request, stage);
      this.#deps.metrics.toolCall(request.tool, 'ok');
      return result;
    } catch (error) {
      this.#deps.metrics.toolCall(request.tool, outcomeOf(error, stage));
      throw error;
    }
  }

  async #invoke(owner: string, request: InvokeRequest, stage: Stage): Promise<Record<string, unknown>> {
    const connector = this.#deps.connectors.find((candidate) => candidate.id === request.connector);
    if (!connector) throw new ServiceError('not_found', `no connector "${request.connector}"; GET /v1/connectors lists them`);
    const tool = connector.tools.find((candidate) => candidate.name === request.tool);
    if (!tool) throw new ServiceError('not_found', `connector ${connector.id} has no tool "${request.tool}"; GET /v1/connectors lists them`);
    validateArguments(tool, request.arguments);
    // One select: the row's status and scopes gate the call; its credential is decrypted only once every gate passed.
    const opened = await this.#deps.connections.find(owner, connector.id);
    if (!opened) throw notConnected(connector.id);
    if (opened.connection.status === 'needs_reconnect') throw needsReconnect(connector.id);
    if (!opened.connection.scopes.includes(tool.scope)) {
      throw new ServiceError('forbidden', `${tool.name} needs scope ${tool.scope}, which this connection was not granted; reconnect granting it`, {
        details: { reason: 'scope_not_granted', scope: tool.scope },
      });
    }
    checkConfirmation(connector.id, tool, request.arguments, request.confirm);
    const { refresher, connections, logger } = this.#deps;
    stage.atProvider = true;
    const credential = await refresher.usable(owner, connector, opened, opened.unseal());
    try {
      return await this.#run(tool, credential, request.arguments);
    } catch (error) {
      if (!(error instanceof CredentialRefused)) throw error;
    }
    // The provider refused a token we held for valid (revoked early, clocks apart): refresh once, try once more.
    // Only a refused refresh (inside `refresh`) marks the connection; a 503 there leaves it as it is.
    logger.info({ connection: opened.connection.id, connector: connector.id }, 'provider refused the access token; refreshing it');
    const refreshed = await refresher.refresh(owner, connector, opened, credential);
    try {
      return await this.#run(tool, refreshed, request.arguments);
    } catch (error) {
      if (error instanceof CredentialRefused) {
        // A token fresh from the token endpoint refused too: nothing but a new consent will do.
        await connections.setStatus(owner, connector.id, 'needs_reconnect');
        logger.warn({ connection: opened.connection.id, connector: connector.id }, 'provider refused a refreshed credential; marked needs_reconnect');
      }
      throw error;
    }
  }

  #run(tool: ToolDefinition, credential: Credential, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    return tool.run({ accessToken: credential.accessToken, client: this.#deps.client, settings: this.#deps.settings, scope: tool.scope }, args);
  }
}

function outcomeOf(error: unknown, stage: Stage): ToolOutcome {
  if (!(error instanceof ServiceError)) return 'error';
  if (error.details?.reason === 'needs_reconnect' || error instanceof CredentialRefused) return 'needs_reconnect';
  if (error.code === 'unavailable') return 'unavailable';
  if (error.status >= 500) return 'error';
  return stage.atProvider ? 'provider_refused' : 'refused';
}
