import type { CounterChild } from '@platform/kit/observability/metrics';
import { byValue, type ServiceMetrics } from '@platform/kit/observability/metrics';
import { scrapedGauge } from '@platform/kit/observability/scraped-gauge';
import { connectors as catalogue } from './connectors/index.ts';
import type { ConnectorDefinition } from './connectors/types.ts';

/**
 * How a tool call ended: `ok`; `refused` by a gate before the provider was called (unknown tool, bad arguments, scope
 * not granted, confirmation missing, not connected); `needs_reconnect` (the user must consent again); the provider
 * refused it (`provider_refused`, a 4xx of its) or could not be reached (`unavailable`, the provider's or the token
 * endpoint's); `error`, anything else (a bug: it answered 500).
 */
export const toolOutcomes = ['ok', 'refused', 'needs_reconnect', 'provider_refused', 'unavailable', 'error'] as const;
export type ToolOutcome = (typeof toolOutcomes)[number];

/**
 * How a refresh at the provider's token endpoint ended: `ok`; `invalid_grant` (the grant is gone: the connection is
 * marked needs_reconnect, unless a newer credential was stored meanwhile); `unavailable` (not reached, or it answered
 * 5xx); `client_refused` (it refused the service's own OAuth client: an operator's fix); `error`.
 */
export const refreshOutcomes = ['ok', 'invalid_grant', 'unavailable', 'client_refused', 'error'] as const;
export type RefreshOutcome = (typeof refreshOutcomes)[number];

/** The tool label of a tool no connector offers (a caller's typo): `other`, so no caller mints a series. */
export const otherTool = 'other';

export interface ConnectorMetrics {
  /** Counts one tool call; `tool` outside the catalogue is counted as `other`. */
  toolCall(tool: string, outcome: ToolOutcome): void;
  refresh(outcome: RefreshOutcome): void;
  /** Where the `connector_reconnects_needed` gauge reads its count at scrape time (the database). */
  readReconnectsNeededFrom(count: () => Promise<number>): void;
}

/**
 * The connector's metrics, every series made up front at zero (tools of the catalogue × outcomes), so a rate is
 * right from the first call and a call costs one map lookup. Labels: `tool` is a tool name of the catalogue, never a
 * connection, user or argument.
 */
export function connectorMetrics(metrics: ServiceMetrics, connectors: readonly ConnectorDefinition[] = catalogue): ConnectorMetrics {
  const calls = metrics.counter<'tool' | 'outcome'>({
    name: 'connector_tool_calls_total',
    help: 'Connector tool calls (POST /v1/invoke, and MCP tools/call through it), by tool and outcome',
    labelNames: ['tool', 'outcome'],
  });
  const refreshes = metrics.counter<'outcome'>({
    name: 'connector_refreshes_total',
    help: "OAuth access-token refreshes at the provider's token endpoint, by outcome",
    labelNames: ['outcome'],
  });
  const reconnects = scrapedGauge(metrics, {
    name: 'connector_reconnects_needed',
    help: 'Connections marked needs_reconnect: their users must consent again before their tools run',
  });
  const toolNames = [...new Set(connectors.flatMap((connector) => connector.tools.map((tool) => tool.name))), otherTool];
  // Tools by name (a Map: the catalogue's names are data, not a type), each with a child per outcome.
  const callChildren = new Map(toolNames.map((tool) => [tool, byValue(toolOutcomes, (outcome) => calls.labels(tool, outcome))]));
  const otherCalls = callChildren.get(otherTool) as Record<ToolOutcome, CounterChild>;
  const refreshChildren = byValue(refreshOutcomes, (outcome) => refreshes.labels(outcome));
  return {
    toolCall: (tool, outcome) => (callChildren.get(tool) ?? otherCalls)[outcome].inc(),
    refresh: (outcome) => refreshChildren[outcome].inc(),
    readReconnectsNeededFrom: (count) => reconnects.readFrom(count),
  };
}
