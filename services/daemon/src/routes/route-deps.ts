import type { Clock } from '@platform/kit/clock';
import type { ChatService } from '../chat/chat-service.ts';
import type { Transcripts } from '../chat/transcripts.ts';
import type { DaemonConfig } from '../config.ts';
import type { EventBroker } from '../events/event-broker.ts';
import type { GateDesk } from '../gates/gate-desk.ts';
import type { AgentIdentity } from '../identity/agent-identity.ts';
import type { IntentBook } from '../intents/intent-book.ts';
import type { IntentRunner } from '../intents/intent-runner.ts';
import type { ToolCatalogue } from '../tools/tool-catalogue.ts';
import type { WakeInbox } from '../wake/wake-inbox.ts';
import type { WakeKeys } from '../wake/wake-keys.ts';

export interface RouteDeps {
  config: DaemonConfig;
  identity: AgentIdentity;
  book: IntentBook;
  runner: IntentRunner;
  gates: GateDesk;
  broker: EventBroker;
  chat: ChatService;
  transcripts: Transcripts;
  wakes: WakeInbox;
  /** Keys the user linked whose alarms wake this agent too. */
  wakeKeys: WakeKeys;
  tools: ToolCatalogue;
  clock: Clock;
  version: string;
  /** Drains and stops the daemon (and, when it owns the process, exits). */
  requestShutdown: () => void;
}
