/**
 * Settles as `p` does, or rejects with `reason()` as soon as `signal`
 * aborts, whether or not what made `p` honours the signal. A `p` left
 * behind by an abort has its rejection handled.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal, reason: () => Error): Promise<T> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(reason());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => undefined);
      reject(reason());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
