import { type GateChoice, gateChoices } from '@platform/client/gate-options';

export interface Gate {
  node_id: string;
  question: string;
  options: string[];
  status: 'pending' | 'approved' | 'denied';
  answer?: string;
  answered_by?: 'user' | 'timeout' | 'cancel' | 'shutdown';
}

/**
 * A gate waiting for the person: its question and one button per option, so a gate with two real choices is answered
 * with the one meant (the picked option is the answer the steps behind it see), plus Deny when no option says no.
 */
export function GateQuestion(props: { gate: Gate; busy: boolean; onAnswer: (choice: GateChoice) => void }) {
  const { gate, busy } = props;
  return (
    <fieldset class="gate">
      <legend>Your agent asks</legend>
      <p class="question">{gate.question}</p>
      <div class="actions">
        {gateChoices(gate.options).map((choice) => (
          <button key={choice.label} type="button" class={choice.approved ? 'primary' : 'danger'} disabled={busy} onClick={() => props.onAnswer(choice)}>
            {choice.label}
          </button>
        ))}
      </div>
    </fieldset>
  );
}

/** What became of an answered gate, in words: the option chosen, or who said no (the person, the clock, a cancel, a stop). */
export function GateOutcome({ gate }: { gate: Gate }) {
  const text =
    gate.status === 'approved'
      ? `You chose “${gate.answer ?? ''}”`
      : gate.answered_by === 'timeout'
        ? 'Denied: nobody answered in time'
        : gate.answered_by === 'cancel'
          ? 'Not answered: the intent was cancelled'
          : gate.answered_by === 'shutdown'
            ? 'Not answered: the agent stopped'
            : `You denied it${gate.answer && gate.answer.toLowerCase() !== 'deny' ? ` (“${gate.answer}”)` : ''}`;
  return (
    <p class="gate-outcome" data-testid="gate-outcome" data-status={gate.status}>
      <span class={`badge ${gate.status}`}>{gate.status}</span> {gate.question} <span aria-hidden="true">→</span> <strong>{text}</strong>
    </p>
  );
}
