import { readServerEvents, type ServerEvent } from '@platform/client/sse-reader';
import { authHeaders, handleUnauthorized } from './client.ts';

export interface StreamHandlers {
  onEvent: (event: ServerEvent) => void;
  /** `live` once connected, `reconnecting` after a drop (with the delay before the next try). */
  onState?: (state: 'connecting' | 'live' | 'reconnecting' | 'ended', detail?: { retryInMs: number }) => void;
  /** True when the stream ended because its subject did (an intent's terminal event): no reconnect. */
  ended?: () => boolean;
}

const maxBackoffMs = 8_000;

/**
 * Follows a server-sent event stream with fetch (EventSource cannot send the Authorization header) and a streamed
 * body. After a drop it reconnects with `Last-Event-ID` set to the last id it saw, so the server replays exactly what
 * came after it: nothing twice, nothing lost (the daemon's intent streams replay from the journal, settlement's feed
 * from the ledger). Backs off 0.5 s, 1 s, 2 s … up to 8 s. Runs until `signal` aborts.
 */
export async function followStream(path: string, handlers: StreamHandlers, signal: AbortSignal): Promise<void> {
  let lastEventId: string | undefined;
  let failures = 0;
  while (!signal.aborted) {
    handlers.onState?.('connecting');
    try {
      const headers: Record<string, string> = { ...authHeaders(), accept: 'text/event-stream' };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const response = await fetch(path, { headers, signal, cache: 'no-store' });
      handleUnauthorized(response.status);
      if (!response.ok || response.body === null) throw new Error(`${path} answered ${response.status}`);
      handlers.onState?.('live');
      failures = 0;
      for await (const event of readServerEvents(response.body)) {
        if (event.id !== undefined) lastEventId = event.id;
        handlers.onEvent(event);
      }
      if (handlers.ended?.()) {
        handlers.onState?.('ended');
        return;
      }
    } catch {
      if (signal.aborted) return;
    }
    failures++;
    const retryInMs = Math.min(maxBackoffMs, 250 * 2 ** failures);
    handlers.onState?.('reconnecting', { retryInMs });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, retryInMs);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
