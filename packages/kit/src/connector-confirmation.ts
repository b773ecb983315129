import { canonicalHash } from './canonical-json.ts';

/**
 * A confirmation of one consequential connector call: the tool, and the digest of exactly the arguments sent. The
 * connector service checks it; the daemon computes it after its gate was approved; both call `confirmationDigest`
 * from here, so they cannot disagree on the bytes.
 */
export interface ConnectorConfirmation {
  tool: string;
  digest: string;
}

/**
 * SHA-256 (hex) of the RFC 8785 canonical JSON of `{connector, tool, arguments}`: key order and spacing do not
 * matter, any changed value does, so a confirmation given for one email cannot send another.
 *
 * @example confirmationDigest('google-workspace', 'mail_send', { to: ['bob@example.com'], subject: 'Hi', body: 'Hello' })
 */
export function confirmationDigest(connector: string, tool: string, args: Record<string, unknown>): string {
  return canonicalHash({ connector, tool, arguments: args });
}

/**
 * MCP `_meta` keys shared by the connector's tool registry, its stdio proxy and the daemon. A registry tool carries
 * `_meta[connectorToolMetaKey]` (which connector tool it maps to and whether it needs a confirmation); a call carries
 * the confirmation in the request's `params._meta[confirmMetaKey]`, never in the model-visible arguments.
 */
export const connectorToolMetaKey = 'platform/connector';
export const confirmMetaKey = 'platform/confirm';

/** What `_meta["platform/connector"]` says about a registry tool. */
export interface ConnectorToolMeta {
  connector: string;
  /** The connector's own tool name; absent on a connector's `connect` tool. */
  tool?: string;
  /** `connect` on the tool that starts the OAuth flow. */
  action?: 'connect';
  /** `required`: the service refuses the call without a matching confirmation. */
  confirmation: 'required' | 'none';
}
