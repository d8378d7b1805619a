import { ManifestFetcher, type FetchResult } from '../ports.js';
import { MAX_MANIFEST_BYTES } from '../static-pods.js';

/** --manifest-url with fetch(), the body capped at MAX_MANIFEST_BYTES. */
export class HttpManifestFetcher extends ManifestFetcher {
  async fetch(url: string, headers: Record<string, string>, timeoutMs: number): Promise<FetchResult> {
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
      if (res.status !== 200) return { ok: false, error: `${url}: HTTP ${res.status}` };
      const length = Number(res.headers.get('content-length') ?? 0);
      if (length > MAX_MANIFEST_BYTES) return { ok: false, error: `${url}: body is ${length} bytes, larger than the ${MAX_MANIFEST_BYTES}-byte limit` };
      const text = await res.text();
      if (text.length > MAX_MANIFEST_BYTES) return { ok: false, error: `${url}: body is larger than the ${MAX_MANIFEST_BYTES}-byte limit` };
      return { ok: true, text };
    } catch (err) {
      return { ok: false, error: `${url}: ${(err as Error).message}` };
    }
  }
}
