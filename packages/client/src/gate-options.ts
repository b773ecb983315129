import type { GateAnswer } from './daemon-client.ts';

/**
 * What a person can answer a daemon gate with. A gate carries a question and its options; its answer is
 * `{approved, answer}`, the picked option as the answer. An option that says no (`no`, `deny`, …) is a denial: the
 * steps behind the gate do not run. The terminal (`platform delegate`) and the console's buttons read options the same
 * way, so one gate means the same thing wherever it is answered.
 */

const denials = new Set(['n', 'no', 'deny', 'denied', 'reject', 'cancel']);

/** What a gate without options of its own offers. */
export const defaultGateOptions: readonly string[] = ['yes', 'no'];

/** Whether picking `option` says no to the gate. */
export function isDenial(option: string): boolean {
  return denials.has(option.trim().toLowerCase());
}

/** One answer a person can give: what its button reads, and the answer sent to `POST /intents/{id}/gates/{nid}/answer`. */
export interface GateChoice extends GateAnswer {
  label: string;
}

/**
 * Every answer to offer for a gate: each of its options (or the default ones), then a `Deny` when none of them says
 * no, since every gate can be denied.
 *
 * @example gateChoices(['the 7:10', 'the 9:40']) // the two trains, then Deny
 */
export function gateChoices(options: readonly string[]): GateChoice[] {
  const offered = options.length > 0 ? options : defaultGateOptions;
  const choices = offered.map((option) => ({ label: option, approved: !isDenial(option), answer: option }));
  if (choices.every((choice) => choice.approved)) choices.push({ label: 'Deny', approved: false, answer: 'deny' });
  return choices;
}
