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
import type { LeaderFence } from '@app/leader-election';
import type { ShardFences } from '../shards.js';

const CHANGES: ReadonlySet<string> = new Set(CRI_RUNTIME_CHANGES);

/** Which pod the code running now acts for, and the term of its shard the step began in. */
export class PodScope {
  private readonly storage = new AsyncLocalStorage<{ uid: string; term: number | undefined }>();
  /** `termOf`: the term in which this replica holds the pod's shard now (ShardFences.termOf); absent, steps are bound to no term. */
  constructor(private readonly termOf?: (uid: string) => number | undefined) {}
  /** Runs `fn` (and everything it awaits) as acting for the pod `uid`, in the term its shard is held in now. */
  run<T>(uid: string, fn: () => T): T {
    return this.storage.run({ uid, term: this.termOf?.(uid) }, fn);
  }
  /** The pod the code running now acts for, if any. */
  get current(): string | undefined {
    return this.storage.getStore()?.uid;
  }
  /** The term the step running now began in. */
  get term(): number | undefined {
    return this.storage.getStore()?.term;
  }
}

/**
 * The fences as a pod's step sees them: within a step for the pod, its
 * shard's fence in the term the step began in (a step in flight across a
 * lost and retaken shard is refused: the retaken shard's pods are resynced
 * by the new term's steps); outside one, the shard's fence.
 */
export class StepFences {
  constructor(
    private readonly fences: Pick<ShardFences, 'forPod' | 'stepFence'>,
    private readonly scope: PodScope,
  ) {}
  forPod(uid: string): LeaderFence {
    return this.scope.current === uid ? this.fences.stepFence(uid, this.scope.term) : this.fences.forPod(uid);
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

/** A CriRuntime whose changing calls made for a pod are refused (NotLeaderError) unless its step's fence holds (StepFences). */
export class ShardFencedCri extends CriRuntime {
  constructor(
    private readonly inner: CriRuntime,
    private readonly fences: Pick<StepFences, 'forPod'>,
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
