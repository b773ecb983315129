import type { EvidenceVerdict } from '@platform/kit/receipt-log/receipt-evidence';
import { useState } from 'preact/hooks';
import { verifyReceipt } from '../api/money.ts';

/** Verifies one receipt by its seq, here: signature, inclusion in the signed checkpoint, consistency with the latest. */
export function ReceiptCheck() {
  const [seq, setSeq] = useState('');
  const [result, setResult] = useState<{ verdict: EvidenceVerdict; receipt: Record<string, unknown> } | { error: string }>();
  const [busy, setBusy] = useState(false);
  const check = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setResult(undefined);
    try {
      setResult(await verifyReceipt(Number(seq)));
    } catch (failure) {
      setResult({ error: (failure as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="verify-title">
      <h2 id="verify-title">Verify a receipt</h2>
      <form class="row" onSubmit={check}>
        <label>
          Receipt seq
          <input inputMode="numeric" pattern="[1-9][0-9]*" required value={seq} onInput={(event) => setSeq((event.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Verify'}
        </button>
      </form>
      <div aria-live="polite" data-testid="receipt-verdict">
        {result && 'error' in result && <p class="bad">{result.error}</p>}
        {result && 'verdict' in result && result.verdict.ok && (
          <p class="good verdict">
            ✓ Verified: signed by the sequencer, leaf {result.verdict.receipt.seq - 1} of the checkpoint of {result.verdict.treeSize}
            {result.verdict.latestSize === undefined
              ? '; no later checkpoint yet to check consistency against.'
              : `; consistency proof verified: the latest checkpoint (${result.verdict.latestSize}) extends it, so the log was only appended to.`}
          </p>
        )}
        {result && 'verdict' in result && !result.verdict.ok && <p class="bad verdict">✗ Not verified: {result.verdict.reason}</p>}
      </div>
    </section>
  );
}
