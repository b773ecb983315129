import { type ConnectorConfirmation, confirmationDigest } from '@platform/kit/connector-confirmation';
import { ServiceError } from '@platform/kit/errors';
import type { ToolDefinition } from '../connectors/types.ts';

/** What a caller sends to confirm a consequential call: the tool and the digest of exactly these arguments. */
export type Confirmation = ConnectorConfirmation;

// The digest lives in the kit: the daemon computes the same one when its gate was approved.
export { confirmationDigest };

/**
 * Passes when the tool is not consequential or the confirmation names this tool and these arguments' digest;
 * otherwise a 409 whose `confirm` member is exactly what to send back, and whose message says what it agrees to.
 */
export function checkConfirmation(connector: string, tool: ToolDefinition, args: Record<string, unknown>, given: Confirmation | undefined): void {
  if (!tool.consequential) return;
  const digest = confirmationDigest(connector, tool.name, args);
  if (given && given.tool === tool.name && given.digest === digest) return;
  const what = tool.describe?.(args) ?? `run ${tool.name}`;
  const reason = given ? 'confirmation_mismatch' : 'confirmation_required';
  const lead = given ? 'the confirmation given is for another tool or other arguments' : `${tool.name} acts outside the user's account`;
  throw new ServiceError(
    'conflict',
    `${lead}: confirm that the agent may ${what}, by sending the same call with confirm {"tool": "${tool.name}", "digest": "${digest}"}`,
    {
      details: { reason, confirm: { tool: tool.name, digest }, action: what },
    },
  );
}
