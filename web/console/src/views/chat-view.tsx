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

/** The reply being written, from the daemon's `say.partial`: all its text so far, for the turn opened at `reply_to`. */
interface Preview {
  reply_to: number;
  attempt: number;
  text: string;
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
 * the agent says, status lines and notices), a box to write in, and the intents the agent is carrying out. An answer
 * shows as it is written (`say.partial`, all the text so far) and its `say` takes its place.
 */
export function ChatView() {
  const me = useData<Me>('/me');
  const [entries, setEntries] = useState<Map<number, Entry>>(new Map());
  const [preview, setPreview] = useState<Preview>();
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
    // The newest say or notice: a turn's answer (or its failure) is the first after the entry it replies to, so a
    // preview whose `reply_to` is older belongs to a turn already answered.
    let answeredThrough = 0;
    const add = (incoming: Entry[]) => {
      for (const entry of incoming) {
        lastSeq = Math.max(lastSeq, entry.seq);
        if (entry.role === 'assistant' || entry.role === 'notice') answeredThrough = Math.max(answeredThrough, entry.seq);
      }
      setEntries((current) => merge(current, incoming));
      // Set in the same handler as the entries, so one render swaps the preview for the say: never both, never neither.
      setPreview((current) => (current !== undefined && answeredThrough > current.reply_to ? undefined : current));
    };
    const showPreview = (data: Record<string, unknown>) => {
      const next = { reply_to: Number(data.reply_to), attempt: Number(data.attempt), text: String(data.text ?? '') };
      if (!(next.reply_to >= answeredThrough)) return;
      setPreview((current) => (current?.reply_to === next.reply_to && current.attempt > next.attempt ? current : next));
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
      if (event.event === 'say.partial' && data.conversation_id === conversation) showPreview(data);
      // Events this page was too slow for are gone from the stream; the transcript still has them.
      if (event.event === 'dropped') catchUp();
      if (typeof data.intent_id === 'string' && (event.event === 'status' || event.event.startsWith('intent.'))) loadIntents();
    };
    const onState = (state: string) => {
      setStream(state);
      if (state !== 'live') return;
      connections++;
      catchUp();
      if (connections === 1) return;
      loadIntents();
      // The turn may have ended (or the daemon restarted) while the page was away; a turn still running sends its
      // next preview whole.
      setPreview(undefined);
    };
    followStream('/events', { onEvent, onState }, controller.signal);
    return () => controller.abort();
  }, []);

  useEffect(() => bottom.current?.scrollIntoView({ block: 'end' }), [entries.size, preview === undefined]);

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
        {/* Busy while an answer is being written: a screen reader announces the finished say once, not every word. */}
        <ol class="transcript" aria-live="polite" aria-busy={preview !== undefined} data-testid="transcript">
          {sorted.map((entry) => (
            <li key={entry.seq} class={`entry ${entry.role}`} data-seq={entry.seq}>
              <span class="who">{entry.role === 'user' ? 'You' : entry.role === 'assistant' ? 'Agent' : entry.role === 'status' ? 'Status' : 'Notice'}</span>
              <p>{entry.text}</p>
            </li>
          ))}
          {preview !== undefined && preview.text !== '' && (
            <li class="entry assistant partial" data-testid="answer-preview">
              <span class="who">Agent, writing…</span>
              <p>{preview.text}</p>
            </li>
          )}
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
