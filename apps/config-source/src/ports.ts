/**
 * What the config source's logic depends on: reading a manifest directory
 * (and noticing it change), fetching a manifest URL, and where the PodUpdate
 * operations and metrics go. Events go through @app/contracts'
 * EventRecorder. The adapters are in adapters/.
 */
import type { PodOperation, PodUpdateMessage, SourcesReadyMessage } from '@app/contracts';
import type { ManifestInput } from './listing.js';

export type DirectoryRead = { missing: true; error: string } | { missing: false; manifests: ManifestInput[] };

export abstract class ManifestDirectory {
  /** Every manifest in the directory (dotfiles and subdirectories ignored). */
  abstract read(dir: string): Promise<DirectoryRead>;
  /** Calls `onChange` when something in the directory changes; returns a stop function. */
  abstract watch(dir: string, onChange: () => void, onError: (err: Error) => void): () => void;
}

export type FetchResult = { ok: true; text: string } | { ok: false; error: string };

export abstract class ManifestFetcher {
  abstract fetch(url: string, headers: Record<string, string>, timeoutMs: number): Promise<FetchResult>;
}

/** configCh: `kubelet.<node>.config.<op>` and `kubelet.<node>.config.ready`. */
export abstract class PodUpdateOutbox {
  abstract podUpdate(msg: PodUpdateMessage): void;
  abstract sourcesReady(msg: SourcesReadyMessage): void;
}

/** What the config source reports to metrics. */
export abstract class ConfigMetrics {
  abstract problems(source: string, count: number): void;
  abstract operations(op: PodOperation, count: number): void;
}
