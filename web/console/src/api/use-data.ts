import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from './client.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** GETs `path` (again when it changes or on reload); `path` undefined loads nothing. */
export function useData<T>(path: string | undefined): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | undefined; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (path === undefined) return;
    const controller = new AbortController();
    setState((previous) => ({ ...previous, loading: true }));
    api<T>(path, { signal: controller.signal })
      .then((data) => setState({ data, error: undefined, loading: false }))
      .catch((error: Error) => {
        if (!controller.signal.aborted) setState({ data: undefined, error: error.message, loading: false });
      });
    return () => controller.abort();
  }, [path, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}

/** The daemon's identity (`/me`): the DID and the public key its journal is verified against. */
export interface Me {
  user_id: string;
  did: string;
  public_key: string;
}

/**
 * A change the page asks for (a DELETE, a POST): `run` clears the last error, awaits the call, and on failure keeps its
 * message in `error` for an Alert, so each view does not write the same try/catch around its buttons.
 */
export function useAction(): { error: string | undefined; run: (call: () => Promise<unknown>) => Promise<boolean> } {
  const [error, setError] = useState<string>();
  const run = useCallback(async (call: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await call();
      return true;
    } catch (failure) {
      setError((failure as Error).message);
      return false;
    }
  }, []);
  return { error, run };
}
