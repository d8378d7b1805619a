/**
 * The CRI calls that change the runtime, fenced by the lease of the shard of
 * the pod they are made for (shards.ts ShardFences; issue 28 item 8), as the
 * sync loop's RemoveContainer is fenced by its leader's lease. The pod is
 * the one whose step runs now: PodScopedSyncer runs each of the three syncs
 * in a PodScope, which every call made within it (awaits included) sees. A
 * call made outside a pod's step (the runtime's Status) is not fenced.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CacheResult } from '@app/pod-cache';
import type { KillPodOptions, Pod, SyncPodType } from '@app/contracts';
import { CriRuntime, type CriCallOptions, type ImageMethod, type ImageRequest, type ImageResponse, type RuntimeMethod, type RuntimeRequest, type RuntimeResponse } from '@app/cri/client';
import { CRI_RUNTIME_CHANGES } from '@app/nats';
import type { MessageMeta } from '@app/tracing';
import { PodSyncer, type SyncPodResult } from '../pod-workers.js';
import type { ShardFences } from '../shards.js';

const CHANGES: ReadonlySet<string> = new Set(CRI_RUNTIME_CHANGES);

/** Which pod the code running now acts for. */
export class PodScope {
  private readonly storage = new AsyncLocalStorage<string>();
  /** Runs `fn` (and everything it awaits) as acting for the pod `uid`. */
  run<T>(uid: string, fn: () => T): T {
    return this.storage.run(uid, fn);
  }
  /** The pod the code running now acts for, if any. */
  get current(): string | undefined {
    return this.storage.getStore();
  }
}

/** The pod worker's syncs, each run in the PodScope of its pod. */
export class PodScopedSyncer extends PodSyncer {
  constructor(
    private readonly inner: PodSyncer,
    private readonly scope: PodScope,
  ) {
    super();
  }
  syncPod(updateType: SyncPodType, pod: Pod, cache: CacheResult, signal?: AbortSignal): Promise<SyncPodResult> {
    return this.scope.run(pod.metadata.uid ?? '', () => this.inner.syncPod(updateType, pod, cache, signal));
  }
  syncTerminatingPod(pod: Pod, cache: CacheResult, gracePeriod: number, kill: KillPodOptions | undefined, runningPodOnly: boolean, signal?: AbortSignal): Promise<void> {
    return this.scope.run(pod.metadata.uid ?? '', () => this.inner.syncTerminatingPod(pod, cache, gracePeriod, kill, runningPodOnly, signal));
  }
  syncTerminatedPod(pod: Pod, cache: CacheResult, runningPodOnly: boolean, kill?: KillPodOptions): Promise<void> {
    return this.scope.run(pod.metadata.uid ?? '', () => this.inner.syncTerminatedPod(pod, cache, runningPodOnly, kill));
  }
}

/** A CriRuntime whose changing calls made for a pod are refused (NotLeaderError) unless its shard's fence holds. */
export class ShardFencedCri extends CriRuntime {
  constructor(
    private readonly inner: CriRuntime,
    private readonly fences: Pick<ShardFences, 'forPod'>,
    private readonly scope: PodScope,
  ) {
    super();
  }
  async runtime<M extends RuntimeMethod>(method: M, request: RuntimeRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<RuntimeResponse<M>> {
    const uid = this.scope.current;
    if (uid && CHANGES.has(method)) this.fences.forPod(uid).check(`call ${method} for pod ${uid}`);
    return this.inner.runtime(method, request, meta, options);
  }
  image<M extends ImageMethod>(method: M, request: ImageRequest<M>, meta?: MessageMeta, options?: CriCallOptions): Promise<ImageResponse<M>> {
    return this.inner.image(method, request, meta, options);
  }
}
