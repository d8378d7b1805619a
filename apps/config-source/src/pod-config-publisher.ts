/**
 * The config-source's work (config.PodConfig's mux and updates channel):
 * run the configured sources, merge their listings (PodConfig), publish the
 * PodUpdate operations on `kubelet.<node>.config.<op>` in the kubelet's
 * order (remove, add, update, delete, reconcile),
 * `kubelet.<node>.config.ready` once every source has delivered, and a
 * Warning event on the node for each new manifest problem.
 */
import { Clock } from '@app/clock';
import { EventRecorder, MessageTypes, type Pod, type PodOperation, type PodUpdateMessage, type SourcesReadyMessage, type SourcesSnapshotMessage } from '@app/contracts';
import { hasOperations, type PodOperations } from '@app/kube';
import type { Logger } from '@app/observability';
import type { Listing } from './listing.js';
import { PodConfig } from './pod-config.js';
import { ConfigMetrics, PodUpdateOutbox } from './ports.js';
import type { PodSource, PodSourceName } from './sources.js';
import type { ManifestProblem } from './static-pods.js';

const PUBLISH_ORDER: readonly PodOperation[] = ['remove', 'add', 'update', 'delete', 'reconcile'];

export class PodConfigPublisher {
  private readonly podConfig: PodConfig;
  private sources: PodSource[] = [];
  /** source -> location -> reasons already reported, so a problem is reported once, not every re-read. */
  private readonly reported = new Map<string, Map<string, Set<string>>>();

  constructor(
    private readonly outbox: PodUpdateOutbox,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
    private readonly logger: Logger,
    sourceNames: readonly string[],
    private readonly metrics?: ConfigMetrics,
  ) {
    this.podConfig = new PodConfig(sourceNames);
    if (sourceNames.length === 0) this.logger.warn('no pod source configured (POD_MANIFEST_PATH, MANIFEST_URL, KUBECONFIG): the node runs no pods');
  }

  /** The creationTimestamps a previous run gave its pods (PodConfig.restoreFirstSeen); call before `start`. */
  restoreFirstSeen(stamps: ReadonlyMap<string, string>): void {
    this.podConfig.restoreFirstSeen(stamps);
  }

  /** Starts the sources; `makeSources` gets the handlers they report to. */
  start(sources: PodSource[]): void {
    this.sources = sources;
    for (const s of sources) s.start();
    if (sources.length === 0) this.publishReady();
  }

  stop(): void {
    for (const s of this.sources) s.stop();
  }

  /** A source delivered a full listing. */
  readonly onListing = (source: PodSourceName, listing: Listing): void => {
    this.report(source, listing.problems);
    const ops = this.podConfig.apply(source, listing.pods, this.clock.date());
    this.publish(source, ops);
    if (this.podConfig.allReady()) this.publishReady();
  };

  /** A source found problems without a new listing. */
  readonly onProblems = (source: PodSourceName, problems: ManifestProblem[]): void => {
    this.report(source, problems, false);
  };

  snapshot(): SourcesSnapshotMessage {
    return { type: MessageTypes.sourcesSnapshot, sources: this.podConfig.snapshot() };
  }

  private publish(source: string, ops: PodOperations): void {
    if (!hasOperations(ops)) return;
    for (const op of PUBLISH_ORDER) {
      const pods = ops[op];
      if (pods.length === 0) continue;
      const msg: PodUpdateMessage = { type: MessageTypes.podUpdate, op, source, pods };
      this.outbox.podUpdate(msg);
      this.metrics?.operations(source, op, pods.length);
      this.logger.info({ op, source, pods: pods.map(describePod) }, 'pod update');
    }
  }

  private publishReady(): void {
    const msg: SourcesReadyMessage = { type: MessageTypes.sourcesReady, sources: this.podConfig.readySources() };
    this.outbox.sourcesReady(msg);
  }

  /**
   * Logs and publishes each problem not reported before; `complete` says the
   * list is the source's whole current set, so fixed problems are forgotten.
   */
  private report(source: string, problems: readonly ManifestProblem[], complete = true): void {
    this.metrics?.problems(source, problems.length);
    const reported = this.reported.get(source) ?? new Map<string, Set<string>>();
    const current = new Map<string, Set<string>>();
    for (const p of problems) {
      const reasons = current.get(p.location) ?? new Set<string>();
      reasons.add(p.reason);
      current.set(p.location, reasons);
      if (reported.get(p.location)?.has(p.reason)) continue;
      this.logger.warn({ source, location: p.location, pod: p.podName, reason: p.reason }, 'static pod manifest refused');
      this.events.nodeEvent('Warning', 'FailedToAdmitStaticPod', `${p.location}: ${p.reason}`);
    }
    if (complete) {
      for (const location of reported.keys()) if (!current.has(location)) this.logger.info({ source, location }, 'static pod manifest problems resolved');
      this.reported.set(source, current);
    } else {
      for (const [location, reasons] of current) reported.set(location, new Set([...(reported.get(location) ?? []), ...reasons]));
      this.reported.set(source, reported);
    }
  }
}

function describePod(p: Pod): string {
  return `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''} (${p.metadata.uid ?? ''})`;
}
