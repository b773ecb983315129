import { describeFailure } from './command-output.ts';
import type { CommandContext, Env } from './service-settings.ts';

type CommandModule = { run(command: string, args: readonly string[], context: CommandContext): Promise<number | undefined> };

/** Each command's module is imported only when it runs, so `platform` stays quick to start. */
const commands: Record<string, () => Promise<CommandModule>> = {
  agent: () => import('./agent-command.ts'),
  alarm: () => import('./alarm-command.ts'),
  balance: () => import('./ledger-commands.ts'),
  pay: () => import('./ledger-commands.ts'),
  deposit: () => import('./ledger-commands.ts'),
  withdraw: () => import('./ledger-commands.ts'),
  receipt: () => import('./receipt-command.ts'),
  market: () => import('./market-command.ts'),
};

export const agentCommandNames = Object.keys(commands);

/**
 * Runs one agent command: its answer on stdout (a table, or `--json`), and on failure one line on stderr naming
 * the command and the reason. Exit 0 on success, 1 for a failed operation, 2 for a usage error.
 */
export async function agentCli(command: string, args: readonly string[], env: Env): Promise<number> {
  const load = commands[command];
  if (!load) throw new Error(`not an agent command: ${command}`);
  const context: CommandContext = { env };
  try {
    return (await (await load()).run(command, args, context)) ?? 0;
  } catch (error) {
    const failure = describeFailure(error, context.target);
    console.error(`platform ${command}: ${failure.line}`);
    return failure.code;
  }
}
