import { integerArgument, parseCommand, positionals } from './command-args.ts';
import { printJson, printTable, UsageError } from './command-output.ts';
import { type CommandContext, useService } from './service-settings.ts';

const usage = 'platform receipt verify <seq> [--public-key <64 hex>] [--url <settlement url>] [--json]';

/**
 * `platform receipt verify <seq>`: fetches the receipt, the signed checkpoint of its batch, the inclusion proof and
 * the consistency proof to the latest checkpoint from settlement's public reads, then checks them here with kit's
 * verifier alone. The trusted key is --public-key (or PLATFORM_SETTLEMENT_PUBLIC_KEY), else the one settlement
 * publishes at /v1/info, said so on stderr (a key fetched with the evidence proves less than one obtained apart).
 * Exit 0 verified, 1 not verified (with the reason), 2 for a usage error. No agent key is needed.
 */
export async function run(_command: string, args: readonly string[], context: CommandContext): Promise<number> {
  const { values, positionals: words } = parseCommand(args, { url: { type: 'string' }, 'public-key': { type: 'string' } });
  const [verb, seqText] = positionals(words, 2, usage) as [string, string];
  if (verb !== 'verify') throw new UsageError(`usage: ${usage}`);
  const seq = integerArgument(seqText, 'seq', { min: 1, max: Number.MAX_SAFE_INTEGER }) as number;
  const pinned = values['public-key'] ?? (context.env.PLATFORM_SETTLEMENT_PUBLIC_KEY || undefined);
  if (pinned !== undefined && !/^[0-9a-fA-F]{64}$/.test(pinned)) throw new UsageError('--public-key must be 64 hex characters (the sequencer key)');
  const { url } = useService(context, 'settlement', values.url);
  const { SettlementReads } = await import('@platform/client/settlement-reads');
  const { verifyReceiptEvidence } = await import('@platform/kit/receipt-log/receipt-evidence');
  const reads = new SettlementReads({ baseUrl: url });
  const info = await reads.info();
  if (pinned === undefined)
    console.error(`receipt: using the sequencer key ${url}/v1/info publishes (pass --public-key to check against a key obtained separately)`);
  const { evidence, record } = await reads.receiptEvidence(seq);
  const verdict = await verifyReceiptEvidence(evidence, {
    sequencerPublicKey: (pinned ?? info.sequencer_public_key).toLowerCase(),
    origin: info.checkpoint_origin,
  });
  if (values.json) {
    printJson(
      verdict.ok
        ? {
            verified: true,
            seq,
            receipt: verdict.receipt,
            batch_id: record.batch?.id ?? null,
            tree_size: verdict.treeSize,
            root: verdict.rootHex,
            latest_tree_size: verdict.latestSize ?? verdict.treeSize,
          }
        : { verified: false, seq, reason: verdict.reason },
    );
  } else if (verdict.ok) {
    const { receipt } = verdict;
    printTable(
      ['seq', 'kind', 'from', 'to', 'amount', 'at'],
      [[String(receipt.seq), receipt.kind, receipt.from ?? '-', receipt.to ?? '-', receipt.amount, receipt.at]],
    );
    console.log(
      `verified: signed by ${receipt.sequencer}, leaf ${receipt.seq - 1} of the signed checkpoint of size ${verdict.treeSize}` +
        `${verdict.latestSize === undefined ? '' : `, which the latest checkpoint (size ${verdict.latestSize}) extends`}`,
    );
  }
  if (!verdict.ok) console.error(`platform receipt: not verified: ${verdict.reason}`);
  return verdict.ok ? 0 : 1;
}
