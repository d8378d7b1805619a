/**
 * The apiserver source (pkg/kubelet/config/apiserver.go): the pods bound to
 * this node, listed and watched through a Reflector into an UndeltaStore,
 * each change handed over as the source's full listing (kubetypes.SET from
 * kubetypes.ApiserverSource, "api"), which PodConfig diffs into ADD, UPDATE,
 * DELETE (deletionTimestamp set), RECONCILE (status only) and REMOVE (the
 * object is gone), as it does for the file and http sources.
 *
 *   apiserver ──list/watch spec.nodeName=<node>──▶ ApiserverPods (Reflector) ──all pods──▶ podsToRun ──▶ PodConfig("api")
 *
 * Invariants:
 *  - The source is ready (sourcesReady) at the apiserver's first successful
 *    list, not before: housekeeping never acts on a node whose API pods are
 *    not known yet.
 *  - While the apiserver is away no listing comes, so nothing is removed:
 *    the last listing stands until a list or watch works again.
 *  - Mirror pods (annotation kubernetes.io/config.mirror) are the
 *    apiserver's copies of this node's static pods, never pods to run
 *    (HandlePodAdditions' IsMirrorPod branch): they are left out of the
 *    listing. The status manager, which owns them, reads them itself.
 *  - Pods are the API's wire JSON, with managedFields dropped (the kubelet
 *    never reads them, and they would ride along every message and record).
 */
import type { Pod } from '@app/contracts';
import { isMirrorPod } from '@app/kube';
import type { Logger } from '@app/observability';
import { ApiserverPods } from './ports.js';
import type { ListingHandler, PodSource } from './sources.js';

export class ApiserverSource implements PodSource {
  readonly name = 'api' as const;
  private stopWatch?: () => void;
  private readonly mirrorsLogged = new Set<string>();

  constructor(
    private readonly nodeName: string,
    private readonly apiserver: ApiserverPods,
    private readonly logger: Logger,
    private readonly onListing: ListingHandler,
  ) {}

  start(): void {
    this.logger.info({ node: this.nodeName }, 'watching the apiserver for the pods bound to this node');
    this.stopWatch = this.apiserver.watch(this.nodeName, (pods) => this.onListing('api', { pods: this.podsToRun(pods), problems: [] }));
  }

  stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
  }

  /** The listing's pods to run: mirror pods left out, managedFields dropped. */
  private podsToRun(pods: readonly Pod[]): Pod[] {
    const out: Pod[] = [];
    const mirrors = new Set<string>();
    for (const pod of pods) {
      const uid = pod.metadata.uid ?? '';
      if (isMirrorPod(pod)) {
        mirrors.add(uid);
        if (!this.mirrorsLogged.has(uid)) this.logger.debug({ pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`, uid }, 'a mirror pod: not a pod to run');
        continue;
      }
      const { managedFields: _managedFields, ...metadata } = pod.metadata;
      out.push({ ...pod, apiVersion: 'v1', kind: 'Pod', metadata });
    }
    this.mirrorsLogged.clear();
    for (const uid of mirrors) this.mirrorsLogged.add(uid);
    return out;
  }
}
