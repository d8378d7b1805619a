/**
 * Reading a console resource again while it is shown: now, then every
 * `everyMs`, until the component goes (no read lands after that).
 */
import { useEffect, useState } from 'preact/hooks';

/** Calls `read` now and every `everyMs` while shown; `gone()` tells a late answer its component went. */
export function usePoll(everyMs: number, read: (gone: () => boolean) => Promise<unknown>, deps: readonly unknown[]): void {
  useEffect(() => {
    let gone = false;
    const once = () => void read(() => gone).catch(() => undefined);
    once();
    const t = setInterval(once, everyMs);
    return () => {
      gone = true;
      clearInterval(t);
    };
  }, deps);
}

/** A JSON resource read every `everyMs`: its last good body, and why the last read failed (the server's `message`). */
export function usePolledJson<T>(url: string, everyMs: number, deps: readonly unknown[] = []): { value: T | undefined; error: string | undefined } {
  const [state, setState] = useState<{ value: T | undefined; error: string | undefined }>({ value: undefined, error: undefined });
  usePoll(
    everyMs,
    async (gone) => {
      const r = await fetch(url);
      const body = (await r.json()) as T & { message?: string };
      if (gone()) return;
      if (r.ok) setState({ value: body, error: undefined });
      else setState((s) => ({ value: s.value, error: body.message ?? `HTTP ${r.status}` }));
    },
    [url, ...deps],
  );
  return state;
}
