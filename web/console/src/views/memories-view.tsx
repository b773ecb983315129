import { useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { useAction, useData } from '../api/use-data.ts';
import { Alert } from '../components/alert.tsx';

interface Memory {
  id: string;
  content: string | null;
  kind: string;
  tags: string[];
  created_at: string;
  status: string;
}

/** What the agent remembers: search, and forget what it should not keep. */
export function MemoriesView() {
  const [query, setQuery] = useState('');
  const [asked, setAsked] = useState('');
  const memories = useData<{ memories: Memory[] }>(`/memories${asked === '' ? '' : `?query=${encodeURIComponent(asked)}`}`);
  const { error, run } = useAction();

  const forget = async (memory: Memory) => {
    if (await run(() => api(`/memories/${memory.id}`, { method: 'DELETE' }))) memories.reload();
  };

  return (
    <section class="panel" aria-labelledby="memories-title">
      <h2 id="memories-title">Memories</h2>
      <search>
        <form
          class="row"
          onSubmit={(event) => {
            event.preventDefault();
            setAsked(query.trim());
          }}
        >
          <label>
            Search what your agent remembers
            <input type="search" maxLength={1000} value={query} onInput={(event) => setQuery((event.target as HTMLInputElement).value)} />
          </label>
          <button type="submit">Search</button>
        </form>
      </search>
      <Alert message={error ?? memories.error} />
      {memories.data?.memories.length === 0 && <p class="muted">Nothing remembered{asked ? ` about “${asked}”` : ''} yet.</p>}
      <ul class="memories" data-testid="memories">
        {(memories.data?.memories ?? []).map((memory) => (
          <li key={memory.id} data-memory={memory.id}>
            <span class="badge">{memory.kind}</span> {memory.content}
            <span class="muted small"> {new Date(memory.created_at).toLocaleDateString()}</span>{' '}
            <button type="button" class="danger" onClick={() => forget(memory)} aria-label={`Forget “${memory.content ?? ''}”`}>
              Forget
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
