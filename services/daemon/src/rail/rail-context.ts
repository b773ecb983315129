import type { Clock } from '@platform/kit/clock';
import type { Logger } from 'pino';
import type { DaemonModels } from '../config.ts';
import type { GateDesk } from '../gates/gate-desk.ts';
import type { IntentBook } from '../intents/intent-book.ts';
import type { ModelClient } from '../llm/model-client.ts';
import type { ToolCatalogue } from '../tools/tool-catalogue.ts';

/** What every stage of the rail works with. */
export interface RailContext {
  book: IntentBook;
  models: ModelClient;
  tools: ToolCatalogue;
  gates: GateDesk;
  clock: Clock;
  logger: Logger;
  settings: {
    models: DaemonModels;
    compileConfidence: number;
    gateTimeoutMs: number;
    ungated: ReadonlySet<string>;
  };
}

/**
 * How a run is stopped. `cancel` ends the intent (model calls and gate waits are abandoned at once, a tool call in
 * flight finishes); `drain` (shutdown) stops between steps and leaves the intent where it is, to resume at the next
 * start.
 */
export interface RunSignals {
  cancel: AbortSignal;
  drain: AbortSignal;
}

/** Output caps per model call: they bound what the gateway reserves against the daily budget. */
export const maxTokens = { compile: 1_024, plan: 4_096, step: 2_048, answer: 2_048, chat: 1_024 } as const;
