import { watch, type FSWatcher } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManifestInput } from '../listing.js';
import { ManifestDirectory, type DirectoryRead } from '../ports.js';
import { MAX_MANIFEST_BYTES } from '../static-pods.js';

/** --pod-manifest-path on the node's file system, watched with fs.watch. */
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
