/** A plan: a small graph of steps, each a tool call, a model step or a gate, run in dependency order. */
export type StepKind = 'tool' | 'model' | 'gate';

export interface PlanStep {
  id: string;
  kind: StepKind;
  /** What the step does, in a few words, for people reading the intent. */
  title: string;
  /** Tool steps: the qualified tool name (`<server>.<tool>`) and its arguments; `{"$ref": "<step>[.path]"}` reads an earlier result. */
  tool?: string;
  arguments?: Record<string, unknown>;
  /** Tool steps: whether running it again after a crash is harmless (decided at plan time, from the tool). */
  rerun_safe?: boolean;
  /** Model steps: what to ask the executor model (the results of the steps it depends on are given too). */
  prompt?: string;
  /** Gate steps: the question for the user and the answers offered. */
  question?: string;
  options?: string[];
  depends_on: string[];
  /** On a gate the daemon's policy added: the step it guards, and why it needs approval. */
  guards?: string;
  gate_reason?: string;
}
