import { canonicalHash } from '@platform/kit/canonical-json';
import { ServiceError } from '@platform/kit/errors';
import type { ToolDefinition } from '../connectors/types.ts';

/** What a caller sends to confirm a consequential call: the tool and the digest of exactly these arguments. */
export interface Confirmation {
  tool: string;
  digest: string;
}

/**
 * SHA-256 (hex) of the RFC 8785 canonical JSON of `{connector, tool, arguments}`: key order and spacing do not
 * matter, any changed value does, so a confirmation given for one email cannot send another.
 */
export function confirmationDigest(connector: string, tool: string, args: Record<string, unknown>): string {
  return canonicalHash({ connector, tool, arguments: args });
}

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
