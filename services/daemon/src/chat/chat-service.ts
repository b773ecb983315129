import type { Clock } from '@platform/kit/clock';
import { ServiceError } from '@platform/kit/errors';
import type { Logger } from 'pino';
import type { EventBroker } from '../events/event-broker.ts';
import type { IntentRunner } from '../intents/intent-runner.ts';
import type { IntentState } from '../intents/intent-state.ts';
import { KeyedQueue } from '../keyed-queue.ts';
import { limits } from '../limits.ts';
import { ModelCallError, type ModelClient } from '../llm/model-client.ts';
import { askStructured } from '../llm/structured-output.ts';
import { chatOutput } from '../rail/outputs.ts';
import { chatMessages } from '../rail/prompts.ts';
import { maxTokens } from '../rail/rail-context.ts';
import type { ToolCatalogue } from '../tools/tool-catalogue.ts';
import type { MemoryContext } from './memory-context.ts';
import { ReplyPreview } from './reply-preview.ts';
import type { Transcripts } from './transcripts.ts';

export interface ChatReply {
  conversation_id: string;
  reply: string;
  /** The intent the turn started, when the user asked for something to be done. */
  intent_id: string | null;
  recalled: number;
  remembered: number;
}

export const defaultConversation = 'default';

/** A model failure as the person chatting should see it. */
export function chatFailure(error: ModelCallError): ServiceError {
  if (error.code === 'budget_exhausted') return new ServiceError('rate_limited', error.message, { retryable: false });
  return new ServiceError('unavailable', error.message, { retryable: error.retryable, details: { reason: error.code } });
}

/**
 * The conversational front door: each turn recalls memories, asks the executor model for a reply (and whether the
 * user asked for something to be done), hands such a task to the rail as an intent, and remembers durable facts.
 * Turns of one conversation are serialised; the transcript records the user's words, the `say` and the `status` lines.
 */
export class ChatService {
  readonly #transcripts: Transcripts;
  readonly #memory: MemoryContext;
  readonly #models: ModelClient;
  readonly #tools: ToolCatalogue;
  readonly #runner: IntentRunner;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #executorModel: string;
  readonly #broker: EventBroker;
  readonly #previewIntervalMs: number;
  readonly #turns = new KeyedQueue();

  constructor(options: {
    transcripts: Transcripts;
    memory: MemoryContext;
    models: ModelClient;
    tools: ToolCatalogue;
    runner: IntentRunner;
    clock: Clock;
    logger: Logger;
    executorModel: string;
    /** Where the reply being written is previewed (`say.partial`), and how often at most. */
    broker: EventBroker;
    previewIntervalMs: number;
  }) {
    this.#transcripts = options.transcripts;
    this.#memory = options.memory;
    this.#models = options.models;
    this.#tools = options.tools;
    this.#runner = options.runner;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#executorModel = options.executorModel;
    this.#broker = options.broker;
    this.#previewIntervalMs = options.previewIntervalMs;
    options.runner.onFinished((state) => void this.#intentFinished(state));
  }

  /** One turn; a wake turn carries the alarm's message instead of the user's. */
  turn(input: { message: string; conversationId?: string; wake?: boolean }): Promise<ChatReply> {
    const conversationId = input.conversationId ?? defaultConversation;
    return this.#turns.run(conversationId, () => this.#turn(input.message, conversationId, input.wake === true));
  }

  async #turn(message: string, conversationId: string, wake: boolean): Promise<ChatReply> {
    const history = await this.#transcripts.history(conversationId, limits.historyTurns, limits.historyChars);
    const opened = await this.#transcripts.append(conversationId, { role: wake ? 'notice' : 'user', text: wake ? `Alarm: ${message}` : message });
    const memories = await this.#memory.recall(message, history, { limit: limits.recallLimit, maxTokens: limits.recallTokens, conversationId });
    const snapshot = await this.#tools.snapshot();
    let output: { reply: string; task: string | null; remember: string[] };
    const preview = new ReplyPreview({
      broker: this.#broker,
      clock: this.#clock,
      intervalMs: this.#previewIntervalMs,
      conversationId,
      replyTo: opened.seq,
    });
    try {
      ({ value: output } = await askStructured(
        this.#models,
        {
          slot: 'executor',
          model: this.#executorModel,
          kindRoute: 'chat',
          maxTokens: maxTokens.chat,
          stream: preview,
          messages: chatMessages({
            memories,
            history,
            message,
            toolNames: [...snapshot.tools.keys()],
            now: this.#clock.now(),
            ...(wake ? { wake: message } : {}),
          }),
        },
        chatOutput,
      ));
    } catch (error) {
      if (!(error instanceof ModelCallError)) throw error;
      await this.#transcripts.append(conversationId, { role: 'notice', text: `I could not answer: ${error.message}` });
      throw chatFailure(error);
    } finally {
      preview.close();
    }
    let intentId: string | null = null;
    let reply = output.reply.trim();
    const task = output.task?.trim();
    if (task) {
      try {
        intentId = (await this.#runner.submit(task.slice(0, limits.messageChars), { via: wake ? 'wake' : 'chat', conversation_id: conversationId }, 'enqueue'))
          .id;
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        reply = `${reply}\n(I could not start on it: ${error.message})`;
      }
    }
    await this.#transcripts.append(conversationId, { role: 'assistant', text: reply, ...(intentId ? { intent_id: intentId } : {}) });
    if (intentId) await this.#transcripts.append(conversationId, { role: 'status', text: `Working on it (intent ${intentId}): ${task}`, intent_id: intentId });
    const remembered = await this.#memory.remember(output.remember, conversationId);
    return { conversation_id: conversationId, reply, intent_id: intentId, recalled: memories.length, remembered };
  }

  /**
   * An intent started from a conversation reports back there when it ends: between turns, never inside one, so the
   * first `say` or notice after a turn's opening entry is that turn's answer (what replaces its `say.partial`).
   */
  #intentFinished(state: IntentState): Promise<void> {
    const conversationId = state.source.conversation_id;
    if (conversationId === undefined || (state.source.via !== 'chat' && state.source.via !== 'wake')) return Promise.resolve();
    return this.#turns.run(conversationId, () => this.#report(conversationId, state));
  }

  async #report(conversationId: string, state: IntentState): Promise<void> {
    try {
      if (state.status === 'completed')
        await this.#transcripts.append(conversationId, { role: 'assistant', text: state.result?.answer || 'Done', intent_id: state.id });
      else
        await this.#transcripts.append(conversationId, {
          role: 'status',
          text: state.result?.clarification ? `I need more detail: ${state.result.clarification}` : `The task ${state.status}: ${state.result?.error ?? ''}`,
          intent_id: state.id,
        });
    } catch (error) {
      this.#logger.warn({ err: error, intent: state.id }, 'could not report an intent to its conversation');
    }
  }
}
