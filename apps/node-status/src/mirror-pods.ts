/**
 * Mirror pods: the API's read-only copy of each static pod, as the kubelet
 * keeps them (pkg/kubelet/kubelet.go tryReconcileMirrorPods, called by
 * SyncPod; pkg/kubelet/pod/mirror_client.go CreateMirrorPod and
 * DeleteMirrorPod; kubelet_pods.go deleteOrphanedMirrorPods, in
 * HandlePodCleanups). Here they are reconciled level-triggered: on every
 * change of the API's view of the node's pods, on every change of the
 * desired pods, and every housekeeping period (2 s).
 *
 *   static pod (desired, admitted, not terminating)   mirror in the API (same namespace/name)
 *     no mirror ──────────────────────────────────────▶ create (config.mirror = config.hash,
 *                                                        ownerReference: the Node, controller)
 *     mirror deleting, or its hash differs ─────────▶ delete (grace 0, its UID as precondition), create
 *   no static pod of that name (and none terminating) ─▶ delete the orphan (its UID as precondition)
 *
 * Invariants:
 *  - Nothing is created before the Node is registered (NodeRestriction
 *    admits a mirror pod only with its Node as owner, by UID), nor for a
 *    Node being deleted.
 *  - Deletes carry the mirror's UID: a mirror created again meanwhile is
 *    never the one deleted. A 404 or a 409 on delete means it is already gone.
 *  - One pass at a time; a change during a pass runs one more pass after it.
 *  - Only while leading (the adapter checks the leader fence).
 */
import type { Clock, Timer } from '@app/clock';
import type { Pod, PodRecord } from '@app/contracts';
import { isAlreadyExists } from '@app/apiserver';
import { ConfigHashAnnotation, ConfigMirrorAnnotation, isMirrorPod, isStaticPod } from '@app/kube';
import type { Logger } from '@app/observability';
import { MirrorPodApi, NodeApi } from './ports.js';

/** The housekeeping period (housekeepingPeriod). */
export const MIRROR_POD_RESYNC_MS = 2000;

export interface MirrorPodActions {
  /** Mirrors to delete: not matching their static pod, or orphaned. */
  delete: { namespace: string; name: string; uid: string; why: 'mismatch' | 'orphan' }[];
  /** Static pods whose mirror to create. */
  create: Pod[];
}

const fullName = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;

/** IsMirrorPodOf: same namespace and name, and the static pod's hash in config.mirror. */
export function isMirrorPodOf(mirror: Pod, pod: Pod): boolean {
  if (fullName(mirror) !== fullName(pod)) return false;
  const hash = mirror.metadata.annotations?.[ConfigMirrorAnnotation];
  return hash !== undefined && hash === pod.metadata.annotations?.[ConfigHashAnnotation];
}

/**
 * What to do, from the desired pods and the API's pods: tryReconcileMirrorPods
 * for each static pod that SyncPod would run (admitted, no termination asked
 * for), deleteOrphanedMirrorPods for each mirror without a static pod, unless
 * that static pod is still terminating (`terminating(fullName)`).
 */
export function mirrorPodActions(desired: readonly PodRecord[], apiPods: readonly Pod[], terminating: (fullName: string) => boolean = () => false): MirrorPodActions {
  const mirrors = new Map(apiPods.filter(isMirrorPod).map((p) => [fullName(p), p]));
  const staticNames = new Set<string>();
  const actions: MirrorPodActions = { delete: [], create: [] };
  for (const r of desired) {
    if (!isStaticPod(r.pod)) continue;
    staticNames.add(fullName(r.pod));
    if (!r.admitted || r.terminationRequested) continue;
    const mirror = mirrors.get(fullName(r.pod));
    if (mirror && (mirror.metadata.deletionTimestamp !== undefined || !isMirrorPodOf(mirror, r.pod))) {
      actions.delete.push({ namespace: mirror.metadata.namespace ?? '', name: mirror.metadata.name ?? '', uid: mirror.metadata.uid ?? '', why: 'mismatch' });
      actions.create.push(r.pod);
    } else if (!mirror) {
      actions.create.push(r.pod);
    }
  }
  for (const [name, mirror] of mirrors) {
    if (staticNames.has(name)) continue;
    if (mirror.metadata.deletionTimestamp !== undefined) continue;
    if (terminating(name)) continue;
    actions.delete.push({ namespace: mirror.metadata.namespace ?? '', name: mirror.metadata.name ?? '', uid: mirror.metadata.uid ?? '', why: 'orphan' });
  }
  return actions;
}

/** CreateMirrorPod's object: the static pod with config.mirror = its hash and the Node as its controlling owner; what the API assigns left out. */
export function mirrorPodOf(pod: Pod, nodeName: string, nodeUid: string): Pod {
  const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, generation: _g, managedFields: _mf, deletionTimestamp: _dt, deletionGracePeriodSeconds: _dg, ownerReferences: _or, ...metadata } = pod.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...metadata,
      annotations: { ...pod.metadata.annotations, [ConfigMirrorAnnotation]: pod.metadata.annotations?.[ConfigHashAnnotation] ?? '' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid, controller: true }],
    },
    spec: pod.spec,
  };
}

/** Where the reconciler reads the desired pods and the API's pods, and hears of their changes. */
export interface MirrorPodInputs {
  /** The desired pods (the sync loop's `pods` bucket). */
  desired(): Promise<PodRecord[]>;
  /** The node's pods in the API, as last listed and watched; undefined before the first list. */
  apiPods(): readonly Pod[] | undefined;
  /** Whether the pod worker is still terminating the static pod of this UID (its record: termination asked for, not done). */
  terminating?(uid: string): Promise<boolean>;
}

export class MirrorPodReconciler {
  private running = false;
  private timer?: Timer;
  private passing?: Promise<void>;
  private again = false;
  private readonly staticUids = new Map<string, string>();

  constructor(
    private readonly api: MirrorPodApi,
    private readonly nodes: NodeApi,
    private readonly inputs: MirrorPodInputs,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly nodeName: string,
    private readonly resyncMs = MIRROR_POD_RESYNC_MS,
  ) {}

  /** Leading: a pass now and every resync period. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const tick = () => {
      this.kick();
      if (this.running) this.timer = this.clock.setTimer(this.resyncMs, tick);
    };
    tick();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
  }

  /** Something changed (the API's pods, the desired pods): a pass now, or right after the one running. */
  kick(): void {
    if (!this.running) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = (async () => {
      do {
        this.again = false;
        await this.pass().catch((err: unknown) => this.logger.error({ err: (err as Error).message }, 'mirror pod reconciliation failed'));
      } while (this.again && this.running);
      this.passing = undefined;
    })();
  }

  /** Resolves when the pass running (if any) is over; for tests. */
  async settled(): Promise<void> {
    while (this.passing) await this.passing;
  }

  /** One reconciliation. */
  async pass(): Promise<void> {
    const apiPods = this.inputs.apiPods();
    // Before the first list nothing is known of the API's pods: no mirror is "missing" yet.
    if (!apiPods) return;
    const desired = await this.inputs.desired();
    // The static pods' UIDs by full name, remembered past their removal from the desired pods:
    // a static pod's UID is not its hash (docs/adr/0004), and the pod worker's record is by UID.
    for (const r of desired) if (isStaticPod(r.pod) && r.pod.metadata.uid) this.staticUids.set(fullName(r.pod), r.pod.metadata.uid);
    const terminatingNames = new Set<string>();
    if (this.inputs.terminating) {
      // Only the orphan candidates: mirrors whose static pod is no longer desired.
      const staticNames = new Set(desired.filter((r) => isStaticPod(r.pod)).map((r) => fullName(r.pod)));
      for (const p of apiPods.filter((x) => isMirrorPod(x) && !staticNames.has(fullName(x)))) {
        const uid = this.staticUids.get(fullName(p));
        if (uid && (await this.inputs.terminating(uid))) terminatingNames.add(fullName(p));
      }
    }
    const actions = mirrorPodActions(desired, apiPods, (name) => terminatingNames.has(name));
    const deletedForMismatch = new Set<string>();
    for (const d of actions.delete) {
      if (!this.running) return;
      const deleted = await this.api.deleteMirrorPod(d.namespace, d.name, d.uid);
      if (d.why === 'orphan') {
        this.logger.info({ pod: `${d.namespace}/${d.name}`, podUID: d.uid, deleted }, 'Deleted orphaned mirror pod');
        this.staticUids.delete(`${d.namespace}/${d.name}`);
      }
      else {
        this.logger.info({ pod: `${d.namespace}/${d.name}`, podUID: d.uid, deleted }, 'Deleted mirror pod as it didn\'t match the static Pod');
        if (deleted) deletedForMismatch.add(`${d.namespace}/${d.name}`);
      }
    }
    const toCreate = actions.create.filter((p) => {
      // A mismatched mirror not deleted (someone else did, or it is going): the next pass sees.
      const mismatched = actions.delete.some((d) => d.why === 'mismatch' && `${d.namespace}/${d.name}` === fullName(p));
      return !mismatched || deletedForMismatch.has(fullName(p));
    });
    if (toCreate.length === 0) return;
    const node = await this.nodes.getNode(this.nodeName);
    if (!node?.metadata.uid) {
      this.logger.info({ node: this.nodeName }, 'No need to create a mirror pod, since failed to get node info from the cluster');
      return;
    }
    if (node.metadata.deletionTimestamp !== undefined) {
      this.logger.info({ node: this.nodeName }, 'No need to create a mirror pod, since node has been removed from the cluster');
      return;
    }
    for (const pod of toCreate) {
      if (!this.running) return;
      try {
        this.logger.info({ pod: fullName(pod) }, 'Creating a mirror pod for static pod');
        await this.api.createMirrorPod(mirrorPodOf(pod, this.nodeName, node.metadata.uid));
      } catch (err) {
        // AlreadyExists: another pass (or a standby's last act) made it; the next pass checks its hash.
        if (!isAlreadyExists(err)) this.logger.error({ pod: fullName(pod), err: (err as Error).message }, 'Failed creating a mirror pod');
      }
    }
  }
}
