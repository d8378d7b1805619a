/**
 * The side effects of the sources, behind ports: reading a manifest
 * directory (and noticing it change), and fetching a manifest URL.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManifestInput } from './listing.js';
import { MAX_MANIFEST_BYTES } from './static-pods.js';

export type DirectoryRead = { missing: true; error: string } | { missing: false; manifests: ManifestInput[] };

export abstract class ManifestDirectory {
  /** Every manifest in the directory (dotfiles and subdirectories ignored). */
  abstract read(dir: string): Promise<DirectoryRead>;
  /** Calls `onChange` when something in the directory changes; returns a stop function. */
  abstract watch(dir: string, onChange: () => void, onError: (err: Error) => void): () => void;
}

export class FsManifestDirectory extends ManifestDirectory {
  async read(dir: string): Promise<DirectoryRead> {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch (err) {
      return { missing: true, error: (err as Error).message };
    }
    const manifests: ManifestInput[] = [];
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const location = join(dir, name);
      try {
        const st = await stat(location);
        if (!st.isFile()) continue;
        if (st.size > MAX_MANIFEST_BYTES) {
          manifests.push({ location, size: st.size, error: `manifest is ${st.size} bytes, larger than the ${MAX_MANIFEST_BYTES}-byte limit` });
          continue;
        }
        manifests.push({ location, size: st.size, text: await readFile(location, 'utf8') });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue; // removed between readdir and read
        manifests.push({ location, error: `cannot read: ${(err as Error).message}` });
      }
    }
    return { missing: false, manifests };
  }

  watch(dir: string, onChange: () => void, onError: (err: Error) => void): () => void {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, () => onChange());
    } catch (err) {
      onError(err as Error);
      return () => undefined;
    }
    watcher.on('error', (err) => {
      watcher.close();
      onError(err);
    });
    return () => watcher.close();
  }
}

export type FetchResult = { ok: true; text: string } | { ok: false; error: string };

export abstract class ManifestFetcher {
  abstract fetch(url: string, headers: Record<string, string>, timeoutMs: number): Promise<FetchResult>;
}

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
