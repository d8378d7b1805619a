/**
 * The file and http sources (pkg/kubelet/config/file.go, http.go): each
 * produces full listings of its pods, on change and every check period.
 */
import { Clock, type Timer } from '@app/clock';
import type { Logger } from '@app/observability';
import { ListingBuilder, type Listing } from './listing.js';
import type { ManifestProblem } from './static-pods.js';
import { ManifestDirectory, ManifestFetcher } from './ports.js';

/** The kubelet's source names (kubetypes.FileSource, HTTPSource, ApiserverSource). */
export type PodSourceName = 'file' | 'http' | 'api';

export type ListingHandler = (source: PodSourceName, listing: Listing) => void;
/** Problems found without a new listing (a URL that cannot be fetched). */
export type ProblemHandler = (source: 'file' | 'http', problems: ManifestProblem[]) => void;

/** A source that can be started and stopped. */
export interface PodSource {
  readonly name: PodSourceName;
  start(): void;
  stop(): void;
}

/**
 * How long the directory's change events are gathered before it is read:
 * one write, a rename into place or an editor's save gives several events
 * within a millisecond or two, read once. Upstream's file source reads on
 * each inotify event at once; this is kept short because every pod start
 * waits it (issue 16, P1: it was 100 ms, a third of a start).
 */
export const FILE_CHANGE_DEBOUNCE_MS = 20;

/** --pod-manifest-path: the directory re-read on every change and every `periodMs`. */
export class FileSource implements PodSource {
  readonly name = 'file' as const;
  private readonly builder: ListingBuilder;
  private timer?: Timer;
  private debounce?: Timer;
  private unwatch?: () => void;
  private reading: Promise<void> = Promise.resolve();
  private missingLogged = false;
  private stopped = false;

  constructor(
    private readonly dir: string,
    nodeName: string,
    private readonly fs: ManifestDirectory,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly periodMs: number,
    private readonly onListing: ListingHandler,
  ) {
    this.builder = new ListingBuilder('file', nodeName);
  }

  start(): void {
    this.readSoon(0);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.debounce?.cancel();
    this.unwatch?.();
  }

  /** Reads the directory now (serialized with any read in progress). */
  refresh(): Promise<void> {
    this.reading = this.reading.then(() => this.readOnce());
    return this.reading;
  }

  private schedule(): void {
    this.timer = this.clock.setTimer(this.periodMs, () => {
      if (this.stopped) return;
      void this.refresh();
      this.schedule();
    });
  }

  private readSoon(ms: number): void {
    this.debounce?.cancel();
    this.debounce = this.clock.setTimer(ms, () => void this.refresh());
  }

  private ensureWatch(): void {
    if (this.unwatch || this.stopped) return;
    this.unwatch = this.fs.watch(
      this.dir,
      () => this.readSoon(FILE_CHANGE_DEBOUNCE_MS),
      (err) => {
        this.logger.warn({ dir: this.dir, err: err.message }, 'stopped watching the manifest directory; it is still re-read periodically');
        this.unwatch = undefined;
      },
    );
  }

  private async readOnce(): Promise<void> {
    if (this.stopped) return;
    const read = await this.fs.read(this.dir);
    if (read.missing) {
      if (!this.missingLogged) this.logger.warn({ dir: this.dir, err: read.error }, 'static pod manifest directory is missing; no file pods until it exists');
      this.missingLogged = true;
      this.unwatch?.();
      this.unwatch = undefined;
      this.onListing('file', this.builder.build([]));
      return;
    }
    if (this.missingLogged) this.logger.info({ dir: this.dir }, 'static pod manifest directory is back');
    this.missingLogged = false;
    this.ensureWatch();
    this.onListing('file', this.builder.build(read.manifests));
  }
}

/** --manifest-url: polled every `periodMs`; a failed fetch keeps the last listing. */
export class HttpSource implements PodSource {
  readonly name = 'http' as const;
  private readonly builder: ListingBuilder;
  private timer?: Timer;
  private stopped = false;
  private lastError?: string;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
    nodeName: string,
    private readonly fetcher: ManifestFetcher,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly periodMs: number,
    private readonly onListing: ListingHandler,
    private readonly onProblems: ProblemHandler,
  ) {
    this.builder = new ListingBuilder('http', nodeName);
  }

  start(): void {
    void this.poll();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  async poll(): Promise<void> {
    if (this.stopped) return;
    const res = await this.fetcher.fetch(this.url, this.headers, 10_000);
    if (res.ok) {
      if (this.lastError) this.logger.info({ url: this.url }, 'manifest URL answers again');
      this.lastError = undefined;
      this.onListing('http', this.builder.build([{ location: this.url, text: res.text }]));
    } else {
      if (this.lastError !== res.error) this.logger.warn({ url: this.url, err: res.error }, 'cannot fetch the manifest URL; keeping the last listing');
      this.lastError = res.error;
      this.onProblems('http', [{ location: this.url, reason: res.error }]);
    }
    if (!this.stopped) this.timer = this.clock.setTimer(this.periodMs, () => void this.poll());
  }
}
