/**
 * What the sync loop runs on its periods once a term has restored
 * (upstream Kubelet.Run and syncLoop's tickers), each on the runner's chain
 * (one at a time, as the one syncLoop goroutine) and for this term only:
 *
 *   pass                   period                   upstream
 *   syncCh                 SYNC_TICK                syncLoop's syncTicker: the pods due for a resync (and syncLoopMonitor)
 *   housekeepingCh         HOUSEKEEPING_PERIOD      syncLoop's housekeepingTicker: HandlePodCleanups (and the
 *                                                   container GC at once for a deleted pod's content)
 *   containerGC            CONTAINER_GC_PERIOD      StartGarbageCollection: containerGC.GarbageCollect
 *   imageGC                IMAGE_GC_PERIOD          StartGarbageCollection: imageManager.GarbageCollect (and one now)
 *   cleanupOrphanedPods    HOUSEKEEPING_PERIOD      HandlePodCleanups: cleanupOrphanedPodDirs, ...Cgroups
 *   reconcileWithSources   SOURCES_RESYNC_PERIOD    (here: config ops lost on NATS repaired by the listings; one now)
 *   eviction               10 s                     evictionManager.Start's monitoring loop
 *   container logs         its own loop             containerLogManager.Start (beside the chain)
 *
 * The gated passes wait while the runtime or the PLEG is unhealthy
 * (SyncLoopRunner.tickGate). A pass of an earlier term never runs again:
 * the runner's `every` is bound to the term it was called in.
 */
import type { ContainerGarbageCollector } from './gc/container-gc.js';
import type { ContainerLogManager } from './logs/container-log-manager.js';
import type { EvictionManager } from './eviction/eviction-manager.js';
import type { ImageGarbageCollector } from './images/image-gc-manager.js';
import type { OrphanedPodCleaner } from './orphans.js';
import type { SyncLoopMetrics } from './ports.js';
import type { SyncLoopMonitor } from './sync-loop-monitor.js';
import type { SyncLoopRunner } from './sync-loop-runner.js';
import type { SyncLoop } from './sync-loop.js';

/** The passes' periods, in ms. */
export interface PassPeriods {
  syncTickMs: number;
  housekeepingMs: number;
  containerGcMs: number;
  imageGcMs: number;
  sourcesResyncMs: number;
  evictionMs: number;
}

export interface PeriodicPassesDeps {
  runner: Pick<SyncLoopRunner, 'run' | 'every' | 'isActive'>;
  loop: Pick<SyncLoop, 'syncTick' | 'housekeeping' | 'reconcileWithSources' | 'desiredPods' | 'areSourcesReady'>;
  containerGC: Pick<ContainerGarbageCollector, 'garbageCollect'>;
  imageGC: Pick<ImageGarbageCollector, 'enabled' | 'startTerm' | 'garbageCollect'>;
  orphans: Pick<OrphanedPodCleaner, 'cleanup'>;
  eviction: Pick<EvictionManager, 'observe' | 'synchronize'>;
  containerLogs: Pick<ContainerLogManager, 'start'>;
  metrics: Pick<SyncLoopMetrics, 'orphanedPodDirsCleaned'>;
  /** syncLoopMonitor: entered before and after each syncCh tick; none: not kept. */
  monitor?: Pick<SyncLoopMonitor, 'entered' | 'startTerm'>;
  periods: PassPeriods;
}

export class PeriodicPasses {
  constructor(private readonly deps: PeriodicPassesDeps) {}

  /** Starts this term's passes: the listings and an image GC at once, then each on its period. */
  startTerm(): void {
    const { runner, loop, containerGC, imageGC, orphans, eviction, containerLogs, metrics, monitor, periods } = this.deps;
    // Ask config-source for the full listings now, then now and then.
    void runner.run('reconcileWithSources', () => loop.reconcileWithSources());
    // syncLoop stores the monitor's time before and after each iteration; the gate holds both back, as upstream's loop.
    monitor?.startTerm();
    runner.every(
      'syncCh',
      periods.syncTickMs,
      async () => {
        await monitor?.entered();
        await loop.syncTick();
        await monitor?.entered();
      },
      { gated: true },
    );
    // HandlePodCleanups; a pod it finds deleted with exited containers or a stopped sandbox left (SyncTerminatedPod leaves
    // them to the GC) has them removed now, by the GC's rules, rather than at the GC's next period (up to a minute).
    runner.every(
      'housekeepingCh',
      periods.housekeepingMs,
      async () => {
        const { contentToRemove } = await loop.housekeeping();
        if (contentToRemove.length > 0) await containerGC.garbageCollect(loop.desiredPods, loop.areSourcesReady);
      },
      { gated: true },
    );
    // StartGarbageCollection's container GC, on the loop's chain: it never runs beside a housekeeping pass.
    runner.every('containerGC', periods.containerGcMs, () => containerGC.garbageCollect(loop.desiredPods, loop.areSourcesReady), { gated: true });
    // StartGarbageCollection's image GC: a pass now and every period, with records fresh for this term (image-gc.ts).
    if (imageGC.enabled) {
      imageGC.startTerm();
      void runner.run('imageGC', () => imageGC.garbageCollect());
      runner.every('imageGC', periods.imageGcMs, () => imageGC.garbageCollect(), { gated: true });
    }
    // HandlePodCleanups' cleanupOrphanedPodDirs and cleanupOrphanedPodCgroups, on the housekeeping period.
    runner.every(
      'cleanupOrphanedPods',
      periods.housekeepingMs,
      async () => {
        const r = await orphans.cleanup(loop.desiredPods, loop.areSourcesReady);
        metrics.orphanedPodDirsCleaned(r.removedDirectories.length + r.failedDirectories.length, r.failedDirectories.length);
      },
      { gated: true },
    );
    runner.every('reconcileWithSources', periods.sourcesResyncMs, () => loop.reconcileWithSources());
    // The container log manager: beside the loop, not on its chain (compressing a log takes a while); not if the term already ended.
    if (runner.isActive) containerLogs.start();
    // The eviction manager's monitoring loop: its summary stats read off the loop's chain (seconds, under a burst of
    // pod starts), its choice of pods and its kill on it (they are the podManager's); no summary (logged), no pass.
    runner.every('eviction', periods.evictionMs, async (summary) => void (summary && (await eviction.synchronize(summary))), { prepare: () => eviction.observe() });
  }
}
