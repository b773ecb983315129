import type { ToolInfo } from './tool-types.ts';

/**
 * Which tool calls wait for the user's approval: decided here, by the daemon, from the tool and its arguments, never
 * by the model. Money and contract writes always ask; any other tool that is not read-only and writes outside the
 * user's own memory asks unless the user exempted it (DAEMON_UNGATED_TOOLS).
 */
export interface GateDecision {
  /** Why approval is needed, in words for the question. */
  reason: string;
  /** Exemptions never apply (money moves, deploys, transactions). */
  always: boolean;
}

function summary(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** The description's first sentence, as a verb phrase for the question ("send an email from the user's mailbox"). */
function whatItDoes(tool: ToolInfo): string {
  const first = /^[^.!?]*/.exec(tool.description.trim())?.[0] ?? '';
  return first === '' ? `runs ${tool.name}` : `${first.charAt(0).toLowerCase()}${first.slice(1)} (${tool.name})`;
}

export function gateFor(tool: ToolInfo, args: Record<string, unknown>, ungated: ReadonlySet<string>): GateDecision | undefined {
  // The server itself refuses it unconfirmed (it reaches people outside the user's account): first, whatever else it claims.
  if (tool.confirmation !== undefined) return { reason: `acts outside your account: ${whatItDoes(tool)} ${summary(args)}`, always: true };
  if (tool.name === 'payments.pay') return { reason: `moves money: pays ${String(args.amount)} to ${String(args.to)}`, always: true };
  if (tool.name === 'market.call')
    return {
      reason: `moves money: pays up to ${String(args.max_payment)} for ${String(args.operation)} on marketplace service ${String(args.service_id)}`,
      always: true,
    };
  if (tool.name === 'contracts.tachyon_deploy') return { reason: `deploys contract ${String(args.contract)} on chain ${String(args.chain_id)}`, always: true };
  if (tool.name === 'contracts.tachyon_call') {
    // A call is a read (eth_call) unless simulate_only is false, which signs and sends a transaction.
    if (args.simulate_only !== false) return undefined;
    return { reason: `sends a transaction to ${String(args.to)}${args.method ? ` (${String(args.method)})` : ''}`, always: true };
  }
  // The user's own memory is theirs to change without asking.
  if (tool.server === 'memory' || tool.readOnly) return undefined;
  if (ungated.has(tool.name)) return undefined;
  return { reason: `writes outside your memory: ${tool.name} ${summary(args)}`, always: false };
}

/** The question a policy gate asks. */
export function gateQuestion(title: string, decision: GateDecision): string {
  return `Approve "${title}"? It ${decision.reason}.`;
}

export const approvalOptions = ['approve', 'deny'];
