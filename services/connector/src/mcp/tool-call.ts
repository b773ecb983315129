import type { ConnectorClient } from '@platform/client/connector-client';
import { ServiceCallError } from '@platform/client/service-session';
import { type ConnectorConfirmation, confirmMetaKey, connectorToolMetaKey } from '@platform/kit/connector-confirmation';
import type { Logger } from 'pino';
import { type RegistryTool, registryToolName } from './registry.ts';

/** An MCP `tools/call` result. */
export interface ToolResult {
  [member: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const failure = (text: string, details?: Record<string, unknown>): ToolResult => ({
  isError: true,
  content: [{ type: 'text', text }],
  ...(details ? { structuredContent: { error: details } } : {}),
});

/** The confirmation in a call's `params._meta`, undefined when none, or the problem with what was given. */
function confirmationOf(meta: Record<string, unknown> | undefined): ConnectorConfirmation | undefined | { problem: string } {
  const given = meta?.[confirmMetaKey];
  if (given === undefined) return undefined;
  const { tool, digest } = (typeof given === 'object' && given !== null ? given : {}) as Record<string, unknown>;
  if (typeof tool !== 'string' || typeof digest !== 'string')
    return { problem: `params._meta["${confirmMetaKey}"] must be {"tool": <name>, "digest": <64 hex>}` };
  return { tool, digest };
}

/**
 * Runs one registry tool through the service and turns every refusal into a tool result with `isError` and words a
 * model can act on (what to confirm and how, which tool connects); nothing here throws, so no call ends the session.
 */
export async function callRegistryTool(
  tool: RegistryTool,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
  deps: { client: ConnectorClient; connectorUrl: string; logger: Logger },
): Promise<ToolResult> {
  const target = tool._meta[connectorToolMetaKey];
  const connectTool = registryToolName(target.connector, 'connect');
  try {
    if (target.action === 'connect') {
      const started = await deps.client.connect(target.connector);
      return {
        content: [
          {
            type: 'text',
            text: `Ask the user to open this URL to connect ${target.connector} (it expires at ${started.expires_at}): ${started.authorization_url}`,
          },
        ],
        structuredContent: started,
      };
    }
    const confirm = confirmationOf(meta);
    if (confirm && 'problem' in confirm) return failure(confirm.problem);
    const answer = await deps.client.invoke({ connector: target.connector, tool: target.tool as string, arguments: args, ...(confirm ? { confirm } : {}) });
    return { content: [{ type: 'text', text: JSON.stringify(answer.result) }], structuredContent: answer.result };
  } catch (error) {
    if (error instanceof ServiceCallError) return refusal(error, connectTool);
    // The service did not answer (down, refused the connection): the model hears it, the session goes on.
    deps.logger.warn({ err: error, tool: tool.name }, 'connector service call failed');
    const why = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    return failure(`the connector service at ${deps.connectorUrl} could not be reached (${why}); try again later`);
  }
}

function refusal(error: ServiceCallError, connectTool: string): ToolResult {
  const details = { code: error.code, ...(error.reason ? { reason: error.reason } : {}), retryable: error.retryable, ...error.details };
  const confirm = error.details.confirm as ConnectorConfirmation | undefined;
  if ((error.reason === 'confirmation_required' || error.reason === 'confirmation_mismatch') && confirm) {
    // The service's words say how to confirm over HTTP; over MCP the confirmation travels in the call's _meta.
    const how = `Over MCP: once the user has approved exactly this, repeat the same tools/call with the same arguments and params._meta {"${confirmMetaKey}": ${JSON.stringify(confirm)}} (never as an argument).`;
    return failure(`${error.serviceMessage}. ${how}`, details);
  }
  if (error.reason === 'not_connected' || error.reason === 'needs_reconnect')
    return failure(`${error.serviceMessage}. Over MCP: call the tool ${connectTool} and ask the user to open the URL it answers.`, details);
  return failure(`${error.code}: ${error.serviceMessage}`, details);
}
