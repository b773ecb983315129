import type { ServerEvent } from '@platform/client/sse-reader';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { followStream } from '../api/event-stream.ts';
import { type Me, useData } from '../api/use-data.ts';
import { Alert } from '../components/alert.tsx';
import { IntentCard } from './intent-card.tsx';

interface Entry {
  seq: number;
  at: string;
  role: 'user' | 'assistant' | 'status' | 'notice';
  text: string;
  intent_id?: string;
}

interface IntentSummary {
  id: string;
  status: string;
  prose: string;
  created_at: string;
}

const conversation = 'default';
const roleOfEvent: Record<string, Entry['role']> = { message: 'user', say: 'assistant', status: 'status', notice: 'notice' };

/** Merges entries by their seq in the conversation: a replayed or repeated entry replaces itself, never doubles. */
function merge(current: Map<number, Entry>, entries: Entry[]): Map<number, Entry> {
  const next = new Map(current);
  for (const entry of entries) next.set(entry.seq, entry);
  return next;
}

/**
 * The conversation with the agent: the transcript, then live from the daemon's `/events` (what the person wrote, what
 * the agent says, status lines and notices), a box to write in, and the intents the agent is carrying out.
 */
export function ChatView() {
  const me = useData<Me>('/me');
  const [entries, setEntries] = useState<Map<number, Entry>>(new Map());
  const [intents, setIntents] = useState<IntentSummary[]>([]);
  const [stream, setStream] = useState('connecting');
  const [draft, setDraft] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string>();
  const bottom = useRef<HTMLDivElement>(null);

  const loadIntents = () =>
    api<{ intents: IntentSummary[] }>('/intents?limit=20')
      .then((page) => setIntents(page.intents))
      .catch(() => {});

  useEffect(() => {
    const controller = new AbortController();
    let connections = 0;
    let lastSeq = 0;
    const add = (incoming: Entry[]) => {
      for (const entry of incoming) lastSeq = Math.max(lastSeq, entry.seq);
      setEntries((current) => merge(current, incoming));
    };
    // The transcript after what the page has: at the start, and after every reconnect (a stream that had not carried
    // an id yet, or a daemon that restarted, cannot replay; the transcript can). Merged by seq, so never twice.
    const catchUp = () =>
      api<{ entries: Entry[] }>(`/conversations/${conversation}?limit=200&after=${lastSeq}`)
        .then((page) => add(page.entries))
        .catch(() => {});
    loadIntents();
    const onEvent = (event: ServerEvent) => {
      const data = JSON.parse(event.data || '{}') as Record<string, unknown>;
      const role = roleOfEvent[event.event];
      if (role !== undefined && data.conversation_id === conversation && typeof data.seq === 'number') add([{ ...(data as unknown as Entry), role }]);
      if (typeof data.intent_id === 'string' && (event.event === 'status' || event.event.startsWith('intent.'))) loadIntents();
    };
    const onState = (state: string) => {
      setStream(state);
      if (state !== 'live') return;
      connections++;
      catchUp();
      if (connections > 1) loadIntents();
    };
    followStream('/events', { onEvent, onState }, controller.signal);
    return () => controller.abort();
  }, []);

  useEffect(() => bottom.current?.scrollIntoView({ block: 'end' }), [entries.size]);

  const send = async (event: Event) => {
    event.preventDefault();
    const message = draft.trim();
    if (message === '' || sending) return;
    setSending(true);
    setError(undefined);
    try {
      await api('/chat', { method: 'POST', body: { message, conversation_id: conversation } });
      setDraft('');
      loadIntents();
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setSending(false);
    }
  };

  const sorted = [...entries.values()].sort((a, b) => a.seq - b.seq);
  return (
    <div class="chat">
      <section class="conversation" aria-label="Conversation">
        <p class={`stream-state ${stream}`} aria-live="polite" data-testid="stream-state">
          {stream === 'live' ? 'Live' : stream === 'reconnecting' ? 'Connection lost, reconnecting…' : 'Connecting…'}
        </p>
        <ol class="transcript" aria-live="polite" data-testid="transcript">
          {sorted.map((entry) => (
            <li key={entry.seq} class={`entry ${entry.role}`} data-seq={entry.seq}>
              <span class="who">{entry.role === 'user' ? 'You' : entry.role === 'assistant' ? 'Agent' : entry.role === 'status' ? 'Status' : 'Notice'}</span>
              <p>{entry.text}</p>
            </li>
          ))}
        </ol>
        <div ref={bottom} />
        <form class="composer" onSubmit={send}>
          <label for="message" class="visually-hidden">
            Message to your agent
          </label>
          <textarea
            id="message"
            rows={2}
            maxLength={16000}
            value={draft}
            placeholder="Ask your agent…"
            onInput={(event) => setDraft((event.target as HTMLTextAreaElement).value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && !event.shiftKey) send(event);
            }}
          />
          <button type="submit" class="primary" disabled={sending || draft.trim() === ''}>
            {sending ? 'Sending…' : 'Send'}
          </button>
        </form>
        <Alert message={error} />
      </section>
      <section class={`intents${intents.some((intent) => intent.status === 'executing') ? ' asking' : ''}`} aria-label="Intents">
        <h2>Intents</h2>
        {intents.length === 0 && <p class="muted">Nothing yet: when you ask your agent to act, what it does shows here.</p>}
        {intents.map((intent) => (
          <IntentCard key={intent.id} summary={intent} publicKey={me.data?.public_key} onChange={loadIntents} />
        ))}
      </section>
    </div>
  );
}
