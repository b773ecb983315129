import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { onSignedOut } from './api/client.ts';
import { beginSignIn, type ConsoleConfig, completeSignIn, currentToken, loadConfig, signOut } from './auth/sign-in.ts';
import { AlarmsView } from './views/alarms-view.tsx';
import { ChatView } from './views/chat-view.tsx';
import { MarketView } from './views/market-view.tsx';
import { MemoriesView } from './views/memories-view.tsx';
import { MoneyView } from './views/money-view.tsx';
import { SpendView } from './views/spend-view.tsx';

const views = [
  { id: 'chat', label: 'Chat', View: ChatView },
  { id: 'money', label: 'Money', View: MoneyView },
  { id: 'alarms', label: 'Alarms', View: AlarmsView },
  { id: 'spend', label: 'Spend', View: SpendView },
  { id: 'memories', label: 'Memories', View: MemoriesView },
  { id: 'market', label: 'Market', View: MarketView },
] as const;

type ViewId = (typeof views)[number]['id'];

function viewFromHash(): ViewId {
  const id = location.hash.replace(/^#\/?/, '').split('/')[0];
  return views.some((view) => view.id === id) ? (id as ViewId) : 'chat';
}

type Phase = { kind: 'loading' } | { kind: 'signed-out'; config: ConsoleConfig; reason?: string } | { kind: 'signed-in' } | { kind: 'broken'; reason: string };

/** Signs the person in (or finishes signing in), then shows the view the address names. */
export function App() {
  const [phase, setPhase] = useState<Phase>({ kind: 'loading' });
  const [view, setView] = useState<ViewId>(viewFromHash());

  // Subscribed in the render's own task, then read again: a `useEffect` runs only after the paint, and a hash change
  // before it (a link followed as the page starts, a navigation right after a reload) was lost, leaving the view of
  // the old address under the new one.
  useLayoutEffect(() => {
    const onHash = () => setView(viewFromHash());
    addEventListener('hashchange', onHash);
    onHash();
    return () => removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    let config: ConsoleConfig | undefined;
    (async () => {
      config = await loadConfig();
      const answer = await completeSignIn(config);
      if (answer?.ok === false) return setPhase({ kind: 'signed-out', config, reason: answer.reason });
      setPhase(currentToken() === undefined ? { kind: 'signed-out', config } : { kind: 'signed-in' });
    })().catch((error: Error) => setPhase({ kind: 'broken', reason: error.message }));
    return onSignedOut(() => {
      if (config) setPhase({ kind: 'signed-out', config, reason: 'your session has ended; sign in again' });
    });
  }, []);

  if (phase.kind === 'loading')
    return (
      <main class="center" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  if (phase.kind === 'broken')
    return (
      <main class="center">
        <h1>The console cannot start</h1>
        <p role="alert">{phase.reason}</p>
      </main>
    );
  if (phase.kind === 'signed-out')
    return (
      <main class="center sign-in">
        <h1>Your agent</h1>
        <p>Sign in to talk to your agent, answer its questions and see your money, alarms and spend.</p>
        {phase.reason && (
          <p role="alert" class="bad">
            {phase.reason}
          </p>
        )}
        <button type="button" class="primary" onClick={() => beginSignIn(phase.config)}>
          Sign in
        </button>
      </main>
    );
  const Current = views.find((entry) => entry.id === view)?.View ?? ChatView;
  return (
    <div class="shell">
      {/* A link, as a skip link is expected to be, that focuses the main region rather than following `#main`: the
          address's hash names the view, which `#main` would replace. */}
      {/* biome-ignore lint/a11y/useValidAnchor: the hash is the view's route, so the jump is made by focusing */}
      <a
        class="skip-link"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to the main content
      </a>
      <header class="top">
        <span class="brand">Console</span>
        <nav aria-label="Views">
          {views.map((entry) => (
            <a key={entry.id} href={`#/${entry.id}`} aria-current={entry.id === view ? 'page' : undefined}>
              {entry.label}
            </a>
          ))}
        </nav>
        <button
          type="button"
          class="quiet"
          onClick={() => {
            signOut();
            location.reload();
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Current />
      </main>
    </div>
  );
}
