import type { GateChoice } from '@platform/client/gate-options';
import type { JournalEnvelope } from '@platform/kit/journal-format';
import { verifyChain } from '@platform/kit/journal-verify';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { followStream } from '../api/event-stream.ts';
import { Alert } from '../components/alert.tsx';
import { type Gate, GateOutcome, GateQuestion } from './gate-answers.tsx';

interface Step {
  id: string;
  kind: string;
  title: string;
  status: string;
  tool?: string;
  error?: string;
  reason?: string;
}

type Envelope = JournalEnvelope;

interface IntentDetail {
  id: string;
  status: string;
  envelopes: Envelope[];
  state: { prose: string; steps: Step[]; gates: Gate[]; result?: { answer?: string; error?: string; clarification?: string } };
}

/** Each envelope's mark: verified, the first that failed (with why), or not checked past a break in the chain. */
type Verification = { checking: true } | { checking: false; ok: boolean; badSeq: number | undefined; reason: string | undefined };

const terminal = new Set(['completed', 'failed', 'cancelled']);

/**
 * One intent: its steps and their states, its gates (a button per option, and deny; once answered, what was answered)
 * and its signed journal, each envelope verified here in the browser (WebCrypto ed25519, the kit's verifier) against
 * the daemon's public key from `/me`, never against the key the intent answer carries. Follows the intent's own event
 * stream while it runs.
 */
export function IntentCard(props: { summary: { id: string; status: string; prose: string }; publicKey: string | undefined; onChange: () => void }) {
  const { summary, publicKey } = props;
  const [open, setOpen] = useState(!terminal.has(summary.status));
  const [detail, setDetail] = useState<IntentDetail>();
  const [verification, setVerification] = useState<Verification>({ checking: true });
  const [answering, setAnswering] = useState<string>();
  const [error, setError] = useState<string>();

  const load = () =>
    api<IntentDetail>(`/intents/${summary.id}`)
      .then(setDetail)
      .catch((failure: Error) => setError(failure.message));

  useEffect(() => {
    if (!open) return;
    if (terminal.has(summary.status)) {
      load();
      return;
    }
    const controller = new AbortController();
    let ended = false;
    followStream(
      `/events?intent_id=${summary.id}`,
      {
        // Loaded at each (re)connect's opening snapshot, not before subscribing: whatever happened between a load
        // and the subscription (a gate asked, say) would otherwise show only at the intent's next event.
        onEvent: (event) => {
          if (['intent.attest', 'intent.fail', 'intent.cancel'].includes(event.event)) ended = true;
          load();
          if (ended) props.onChange();
        },
        ended: () => ended,
      },
      controller.signal,
    );
    return () => controller.abort();
  }, [open, summary.id]);

  useEffect(() => {
    if (detail === undefined || publicKey === undefined) return;
    setVerification({ checking: true });
    verifyChain(detail.envelopes, publicKey, detail.id).then((verdict) =>
      setVerification(
        verdict.ok
          ? { checking: false, ok: true, badSeq: undefined, reason: undefined }
          : { checking: false, ok: false, badSeq: verdict.seq, reason: verdict.reason },
      ),
    );
  }, [detail, publicKey]);

  const answer = async (gate: Gate, choice: GateChoice) => {
    setAnswering(gate.node_id);
    setError(undefined);
    try {
      await api(`/intents/${summary.id}/gates/${encodeURIComponent(gate.node_id)}/answer`, {
        method: 'POST',
        body: { approved: choice.approved, answer: choice.answer },
      });
      await load();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setAnswering(undefined);
    }
  };

  const status = detail?.status ?? summary.status;
  const gates = detail?.state.gates ?? [];
  return (
    <article class="intent" data-intent={summary.id} data-status={status}>
      <header>
        <button type="button" class="disclosure" aria-expanded={open} onClick={() => setOpen(!open)}>
          <span class={`badge ${status}`}>{status}</span> <span class="prose">{summary.prose}</span>
        </button>
      </header>
      {open && detail && (
        <div class="intent-body">
          {gates.map((gate, index) =>
            gate.status === 'pending' ? (
              <GateQuestion key={`${gate.node_id}-${index}`} gate={gate} busy={answering !== undefined} onAnswer={(choice) => answer(gate, choice)} />
            ) : (
              <GateOutcome key={`${gate.node_id}-${index}`} gate={gate} />
            ),
          )}
          <ol class="steps">
            {detail.state.steps.map((step) => (
              <li key={step.id} class={`step ${step.status}`}>
                <span class={`badge ${step.status}`}>{step.status}</span> {step.title}
                {step.tool && <code>{step.tool}</code>}
                {step.error && <span class="bad"> {step.error}</span>}
                {step.reason && <span class="muted"> ({step.reason})</span>}
              </li>
            ))}
          </ol>
          {detail.state.result?.answer && <p class="answer">{detail.state.result.answer}</p>}
          {detail.state.result?.error && <p class="bad">{detail.state.result.error}</p>}
          <Journal envelopes={detail.envelopes} verification={verification} publicKey={publicKey} />
        </div>
      )}
      <Alert message={error} />
    </article>
  );
}

function Journal(props: { envelopes: Envelope[]; verification: Verification; publicKey: string | undefined }) {
  const { envelopes, verification } = props;
  const summary = verification.checking
    ? 'Checking signatures…'
    : verification.ok
      ? `All ${envelopes.length} envelopes verified against your agent’s key`
      : `Envelope ${verification.badSeq} failed: ${verification.reason}`;
  return (
    <details class="journal">
      <summary>
        Signed journal:{' '}
        <span class={verification.checking ? 'muted' : verification.ok ? 'good' : 'bad'} data-testid="journal-verdict">
          {summary}
        </span>
      </summary>
      <ol>
        {envelopes.map((envelope) => {
          const mark = verification.checking
            ? 'checking'
            : verification.ok || envelope.seq < (verification.badSeq ?? 0)
              ? 'verified'
              : envelope.seq === verification.badSeq
                ? 'failed'
                : 'unchecked';
          return (
            <li key={envelope.seq} class={`envelope ${mark}`} data-mark={mark}>
              <span class="mark" aria-hidden="true">
                {mark === 'verified' ? '✓' : mark === 'failed' ? '✗' : '·'}
              </span>
              <span class="visually-hidden">{mark}: </span>
              {envelope.seq}. {envelope.kind} <time>{new Date(envelope.at).toLocaleTimeString()}</time>
            </li>
          );
        })}
      </ol>
    </details>
  );
}
