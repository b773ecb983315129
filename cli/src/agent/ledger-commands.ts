import type { SettlementClient } from '@platform/client/settlement-client';
import { loadAgentKey } from './agent-key-file.ts';
import { amountArgument, didArgument, parseCommand, positionals } from './command-args.ts';
import { printFields, printJson, printTable, UsageError } from './command-output.ts';
import { type CommandContext, useService } from './service-settings.ts';

const usages: Record<string, string> = {
  balance: 'platform balance',
  pay: 'platform pay <did> <amount> [--ref 0x<64 hex>] [--idempotency-key <key>]',
  deposit: 'platform deposit (where and how to deposit on chain) | platform deposit <amount> --faucet (development)',
  withdraw:
    'platform withdraw <amount> [--swap-out <TICKER>] [--idempotency-key <key>] | platform withdraw bind <0x address> [--signature 0x<65 bytes>] | platform withdraw status <id>',
};

const options = {
  url: { type: 'string' },
  ref: { type: 'string' },
  'idempotency-key': { type: 'string' },
  faucet: { type: 'boolean' },
  'swap-out': { type: 'string' },
  signature: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseCommand<typeof options>>['values'];

/** `platform balance|pay|deposit|withdraw`: the agent's own account on settlement, after the DID handshake. */
export async function run(command: string, args: readonly string[], context: CommandContext): Promise<number> {
  const { values, positionals: words } = parseCommand(args, options);
  const usage = usages[command] as string;
  const allowed: Record<string, readonly string[]> = {
    balance: [],
    pay: ['ref', 'idempotency-key'],
    deposit: ['faucet'],
    withdraw: ['swap-out', 'idempotency-key', 'signature'],
  };
  for (const name of Object.keys(values))
    if (name !== 'json' && name !== 'url' && !allowed[command]?.includes(name)) throw new UsageError(`${command} does not take --${name}; usage: ${usage}`);
  const print = (answer: unknown, human: () => void) => (values.json ? printJson(answer) : human());
  if (command === 'balance') {
    positionals(words, 0, usage);
    const account = await (await ledger(context, values.url)).client.balance();
    print(account, () =>
      printTable(
        ['did', 'balance', 'held', 'escrow bound', 'payout address'],
        [[account.did, account.balance, account.held, account.escrow_bound, account.payout_address ?? '-']],
      ),
    );
  } else if (command === 'pay') {
    const [to, amount] = positionals(words, 2, usage) as [string, string];
    const request = payRequest(didArgument(to, 'the payee'), amountArgument(amount), values);
    const paid = await (await ledger(context, values.url)).client.pay(request);
    print(paid, () => printTable(['seq', 'to', 'amount', 'at'], [[String(paid.seq), to, String(paid.receipt.amount), String(paid.receipt.at)]]));
  } else if (command === 'deposit') return deposit(words, values, context);
  else return withdraw(words, values, context);
  return 0;
}

function payRequest(to: string, amount: string, values: Values) {
  if (values.ref !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(values.ref)) throw new UsageError('--ref must be a 32-byte digest, 0x + 64 hex');
  return { to, amount, ...(values.ref ? { ref: values.ref } : {}), ...(values['idempotency-key'] ? { idempotency_key: values['idempotency-key'] } : {}) };
}

/** Without an amount, where and how to deposit (asking registers the claim); with one and --faucet, development tokens. */
async function deposit(words: string[], values: Values, context: CommandContext): Promise<number> {
  if (words.length === 0) {
    if (values.faucet) throw new UsageError('--faucet needs an amount: platform deposit <amount> --faucet');
    const where = await (await ledger(context, values.url)).client.depositInstructions();
    if (values.json) printJson(where);
    else {
      printFields({
        chain_id: where.chain_id,
        vault_address: where.vault_address,
        token_address: where.token_address,
        did_hash: where.claim.did_hash,
        confirmations: where.confirmations,
      });
      console.log(`\nsteps: ${where.steps.map((step, index) => `${index + 1}) ${step}`).join('  ')}`);
    }
    return 0;
  }
  const [amount] = positionals(words, 1, usages.deposit as string) as [string];
  amountArgument(amount);
  // A real deposit is a wallet's transaction on chain; from here only the development faucet can add funds.
  if (!values.faucet) throw new UsageError('deposits are made on chain from a wallet (`platform deposit` says where); add --faucet for development funds');
  const credited = await (await ledger(context, values.url)).client.faucet(amount);
  const made = credited.deposit as { seq: number; amount: string; source: string; id: string };
  if (values.json) printJson(credited);
  else printTable(['seq', 'amount', 'source', 'deposit'], [[String(made.seq), made.amount, made.source, made.id]]);
  return 0;
}

async function withdraw(words: string[], values: Values, context: CommandContext): Promise<number> {
  const usage = usages.withdraw as string;
  const [first] = words;
  if (first === 'bind') return bind(positionals(words, 2, usage)[1] as string, values, context);
  if (first === 'status') {
    const id = positionals(words, 2, usage)[1] as string;
    const { url } = useService(context, 'settlement', values.url);
    const { SettlementReads } = await import('@platform/client/settlement-reads');
    const found = await new SettlementReads({ baseUrl: url }).withdrawal(id);
    const { withdrawal } = found;
    if (values.json) printJson(found);
    else
      printTable(
        ['withdrawal', 'amount', 'to', 'status', 'batch', 'anchored', 'tx'],
        [
          [
            withdrawal.id,
            withdrawal.amount,
            withdrawal.payout_address,
            withdrawal.status,
            String(found.batch_number ?? '-'),
            String(found.anchored),
            withdrawal.tx_hash ?? '-',
          ],
        ],
      );
    return 0;
  }
  const [amount] = positionals(words, 1, usage) as [string];
  if (values.signature !== undefined) throw new UsageError('--signature goes with `withdraw bind`');
  const request = {
    amount: amountArgument(amount),
    ...(values['swap-out'] ? { swap_out: values['swap-out'] } : {}),
    ...(values['idempotency-key'] ? { idempotency_key: values['idempotency-key'] } : {}),
  };
  const answer = await (await ledger(context, values.url)).client.withdraw(request);
  const { withdrawal } = answer;
  if (values.json) printJson(answer);
  else
    printTable(
      ['withdrawal', 'amount', 'to', 'status', 'seq'],
      [[withdrawal.id, withdrawal.amount, withdrawal.payout_address, withdrawal.status, String(answer.seq)]],
    );
  return 0;
}

/**
 * Binding a payout address takes its owner's EIP-191 signature, made in their wallet: without --signature this
 * prints the exact text to sign; with it, binds.
 */
async function bind(address: string, values: Values, context: CommandContext): Promise<number> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new UsageError('the payout address must be 0x + 40 hex');
  const { client, did, url } = await ledger(context, values.url);
  if (values.signature === undefined) {
    const { SettlementReads } = await import('@platform/client/settlement-reads');
    const { payoutBindingMessage } = await import('@platform/kit/payout-binding');
    const { chain_id: chainId } = await new SettlementReads({ baseUrl: url }).info();
    const message = payoutBindingMessage(did, address, chainId);
    if (values.json) printJson({ did, address, chain_id: chainId, message });
    else console.log(`sign this text with ${address} (EIP-191 personal_sign), then run \`platform withdraw bind ${address} --signature 0x…\`:\n${message}`);
    return 0;
  }
  const bound = await client.bindPayoutAddress(address, values.signature);
  if (values.json) printJson(bound);
  else printFields(bound);
  return 0;
}

async function ledger(context: CommandContext, urlFlag: string | undefined): Promise<{ client: SettlementClient; did: string; url: string }> {
  const { url, token } = useService(context, 'settlement', urlFlag);
  const { key } = loadAgentKey(context.env);
  const { SettlementClient } = await import('@platform/client/settlement-client');
  return { client: new SettlementClient({ baseUrl: url, key, ...(token ? { transportToken: token } : {}) }), did: key.did, url };
}
