/**
 * The status manager's cache of versioned pod statuses (the kubelet's
 * status.manager podStatuses map, pkg/kubelet/status/status_manager.go), as
 * a pure in-memory structure: no clock, no NATS, no KV. The service persists
 * each entry it gets back to the `pod-status` bucket and builds a new store
 * from that bucket when it starts.
 *
 * Every accepted change goes through updateStatus (upstream
 * updateStatusInternal):
 *
 *   old status = the cached one, else the pod's own (TerminatePod's argument)
 *     -> a terminal phase may not change                 dropped, with the reason
 *     -> checkContainerStateTransition                  dropped, with the reason
 *     -> lastTransitionTime kept while a condition's status holds, else now
 *     -> startTime kept, else now
 *     -> normalizeStatus (second-precision times, sorted statuses, capped messages)
 *     -> equal to the cached status (isPodStatusByKubeletEqual)?  not a change
 *        (unless forced: a pod being deleted, TerminatePod)
 *     -> version = previous + 1
 *
 * Where this differs from upstream, the comment at the place says why.
 */
import type { ContainerStatus, Pod, PodSpec, PodStatus, VersionedPodStatusRecord } from '@app/contracts';
import {
  isPodPhaseTerminal,
  isRestartableInitContainer,
  isStaticPod,
  podConditionByKubelet,
  podConditionSharedByKubelet,
  rfc3339,
  terminatePodStatus,
  updateLastTransitionTimes,
  withContainerProbeResult,
} from '@app/kube';

/** One pod's versioned status: what the `pod-status` bucket holds. */
export interface StatusEntry extends VersionedPodStatusRecord {
  version: number;
  podName: string;
  podNamespace: string;
  status: PodStatus;
  /**
   * The status was produced by TerminatePod (upstream podIsFinished): the
   * pod's termination is complete, so the apiserver copy may be deleted.
   * Once set it stays set, except for static pods (as upstream).
   */
  podIsFinished?: boolean;
}

export interface ApplyResult {
  /** A new version was stored: persist `entry`. */
  changed: boolean;
  /** The entry now current (absent when the pod has none). */
  entry?: StatusEntry;
  /** Why the update was refused; absent for an accepted or a no-op update. */
  dropped?: string;
}

/**
 * What the status manager knows of a pod besides its status (upstream reads
 * the pod from the pod manager).
 */
export interface StatusPod {
  name: string;
  namespace: string;
  /**
   * restartPolicy, init containers (sidecars), readinessGates, container
   * counts. Remembered per UID for readiness and startup merges, which carry
   * no pod.
   */
  spec?: PodSpec;
  /** metadata.annotations: kubernetes.io/config.source tells a static pod. */
  annotations?: Record<string, string>;
  /** metadata.deletionTimestamp: SetPodStatus then always makes a new version. */
  deletionTimestamp?: string;
}

/** The StatusPod of an API pod. */
export function statusPodOf(pod: Pod): StatusPod {
  return {
    name: pod.metadata.name ?? '',
    namespace: pod.metadata.namespace ?? '',
    spec: pod.spec,
    ...(pod.metadata.annotations ? { annotations: pod.metadata.annotations } : {}),
    ...(pod.metadata.deletionTimestamp ? { deletionTimestamp: pod.metadata.deletionTimestamp } : {}),
  };
}

/** kubecontainer.MaxPodTerminationMessageLogLength: the terminated messages of all a pod's containers share it. */
const MAX_POD_TERMINATION_MESSAGE_BYTES = 1024 * 12;

/** metav1.Time.Rfc3339Copy: drop sub-seconds; a time we cannot read is left as it is. */
function normalizeTime(t: string | undefined | null): string | undefined | null {
  if (t === undefined || t === null || t === '') return t;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? t : rfc3339(ms);
}

/** The first `max` bytes of `s` in UTF-8, never splitting a character. */
function truncateUtf8(s: string, max: number): string {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length <= max) return s;
  let end = max;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

// ---------------------------------------------------------------------------
// Semantic equality (apiequality.Semantic.DeepEqual on the JSON form)
// ---------------------------------------------------------------------------

/**
 * Fields that are pointers in Go: set-but-empty differs from unset
 * (`running: {}` is a running container; `started: false` is not "unknown").
 */
const POINTER_FIELDS: ReadonlySet<string> = new Set(['running', 'waiting', 'terminated', 'started']);

/** Go's zero value: what an absent JSON field decodes to. */
function isZero(v: unknown, field: string | undefined): boolean {
  if (v === undefined || v === null) return true;
  if (field !== undefined && POINTER_FIELDS.has(field)) return false;
  if (v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.entries(v).every(([k, x]) => isZero(x, k));
  return false;
}

function semanticEqual(a: unknown, b: unknown, field?: string): boolean {
  const za = isZero(a, field);
  const zb = isZero(b, field);
  if (za || zb) return za && zb;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null) {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
    for (const k of keys) if (!semanticEqual(ra[k], rb[k], k)) return false;
    return true;
  }
  return a === b;
}

/**
 * isPodStatusByKubeletEqual: the conditions the kubelet owns or shares
 * (kubetypes PodConditionByKubelet, PodConditionSharedByKubelet) compared by
 * status, reason and message (so transition and probe times do not count),
 * the rest of the status field by field; other conditions are left out.
 */
export function isPodStatusByKubeletEqual(oldStatus: PodStatus, status: PodStatus): boolean {
  for (const c of status.conditions ?? []) {
    if (!podConditionByKubelet(c.type) && !podConditionSharedByKubelet(c.type)) continue;
    const oc = oldStatus.conditions?.find((o) => o.type === c.type);
    if (!oc || oc.status !== c.status || (oc.message ?? '') !== (c.message ?? '') || (oc.reason ?? '') !== (c.reason ?? '')) return false;
  }
  return semanticEqual({ ...oldStatus, conditions: undefined }, { ...status, conditions: undefined });
}

// ---------------------------------------------------------------------------
// The rules of updateStatusInternal
// ---------------------------------------------------------------------------

/**
 * checkContainerStateTransition: a terminated container may not leave the
 * terminated state, unless the restart policy restarts it (Always; OnFailure
 * after a failure). Sidecars always restart. Returns why not, or undefined.
 */
export function checkContainerStateTransition(oldStatus: PodStatus, status: PodStatus, spec: PodSpec | undefined): string | undefined {
  // The API server defaults restartPolicy to Always; a pod we know nothing of gets the default.
  const restartPolicy = spec?.restartPolicy ?? 'Always';
  if (restartPolicy === 'Always') return undefined;
  const mayRestart = (old: ContainerStatus): boolean => old.state?.terminated === undefined || (old.state.terminated.exitCode !== 0 && restartPolicy === 'OnFailure');

  for (const old of oldStatus.containerStatuses ?? []) {
    if (mayRestart(old)) continue;
    if ((status.containerStatuses ?? []).some((s) => s.name === old.name && s.state?.terminated === undefined)) {
      return `terminated container ${old.name} attempted illegal transition to non-terminated state`;
    }
  }
  const oldInits = oldStatus.initContainerStatuses ?? [];
  for (const [i, old] of oldInits.entries()) {
    // kubeutil.GetContainerByIndex: the spec's container at the same index, by the same name.
    const initSpec = spec?.initContainers?.[i];
    if (spec !== undefined && initSpec?.name !== old.name) return `found mismatch between pod spec and status, container: ${old.name}`;
    if (isRestartableInitContainer(initSpec)) continue;
    if (mayRestart(old)) continue;
    if ((status.initContainerStatuses ?? []).some((s) => s.name === old.name && s.state?.terminated === undefined)) {
      return `terminated init container ${old.name} attempted illegal transition to non-terminated state`;
    }
  }
  return undefined;
}

/** kubetypes.SortInitContainerStatuses: in the order of the spec's init containers. */
function sortInitContainerStatuses(spec: PodSpec | undefined, statuses: ContainerStatus[]): void {
  let current = 0;
  for (const c of spec?.initContainers ?? []) {
    for (let j = current; j < statuses.length; j++) {
      const s = statuses[j];
      if (s?.name !== c.name) continue;
      const here = statuses[current];
      if (here === undefined) break;
      statuses[current] = s;
      statuses[j] = here;
      current++;
      break;
    }
  }
}

/**
 * normalizeStatus: times at second precision (what the apiserver stores),
 * each terminated message capped at its share of the pod's 12 KiB, container
 * and ephemeral container statuses sorted by name and init container statuses
 * in spec order, so that a re-ordered or finer-grained copy compares equal.
 */
export function normalizeStatus(spec: PodSpec | undefined, status: PodStatus): PodStatus {
  const containers = spec
    ? spec.containers.length + (spec.initContainers?.length ?? 0) + (spec.ephemeralContainers?.length ?? 0)
    : (status.containerStatuses?.length ?? 0) + (status.initContainerStatuses?.length ?? 0) + (status.ephemeralContainerStatuses?.length ?? 0);
  const bytesPerStatus = containers > 0 ? Math.floor(MAX_POD_TERMINATION_MESSAGE_BYTES / containers) : MAX_POD_TERMINATION_MESSAGE_BYTES;
  const normalizeState = (s: ContainerStatus['state']): void => {
    if (s?.running?.startedAt !== undefined) s.running.startedAt = normalizeTime(s.running.startedAt) ?? undefined;
    const t = s?.terminated;
    if (t) {
      if (t.startedAt !== undefined) t.startedAt = normalizeTime(t.startedAt) ?? undefined;
      if (t.finishedAt !== undefined) t.finishedAt = normalizeTime(t.finishedAt) ?? undefined;
      if (t.message !== undefined) t.message = truncateUtf8(t.message, bytesPerStatus);
    }
  };
  if (status.startTime !== undefined) status.startTime = normalizeTime(status.startTime) ?? undefined;
  for (const c of status.conditions ?? []) {
    if (c.lastProbeTime !== undefined) c.lastProbeTime = normalizeTime(c.lastProbeTime);
    if (c.lastTransitionTime !== undefined) c.lastTransitionTime = normalizeTime(c.lastTransitionTime) ?? undefined;
  }
  for (const s of status.containerStatuses ?? []) {
    normalizeState(s.state);
    normalizeState(s.lastState);
  }
  status.containerStatuses?.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const s of status.initContainerStatuses ?? []) {
    normalizeState(s.state);
    normalizeState(s.lastState);
  }
  if (status.initContainerStatuses) sortInitContainerStatuses(spec, status.initContainerStatuses);
  for (const s of status.ephemeralContainerStatuses ?? []) {
    normalizeState(s.state);
    normalizeState(s.lastState);
  }
  status.ephemeralContainerStatuses?.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return status;
}

// ---------------------------------------------------------------------------
// Probe results: libs/kube's withContainerProbeResult (SetContainerReadiness, SetContainerStartup)
// ---------------------------------------------------------------------------

/**
 * The spec of a pod we hold a status for but whose spec we have not seen
 * (the store was rebuilt from KV and no SetPodStatus came yet): its
 * containers are those with statuses, and no init container is taken for a
 * sidecar.
 */
function specFromStatus(status: PodStatus): PodSpec {
  return {
    containers: (status.containerStatuses ?? []).map((s) => ({ name: s.name })),
    initContainers: (status.initContainerStatuses ?? []).map((s) => ({ name: s.name })),
  };
}

// ---------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------

export class PodStatusVersions {
  private readonly entries = new Map<string, StatusEntry>();
  /** The pod each UID's status was last set for; not persisted (see specFromStatus). */
  private readonly pods = new Map<string, StatusPod>();

  constructor(entries?: Iterable<[string, StatusEntry]>) {
    for (const [uid, entry] of entries ?? []) this.entries.set(uid, structuredClone(entry));
  }

  /** GetPodStatus: the current entry of a UID (a copy). */
  get(uid: string): StatusEntry | undefined {
    const entry = this.entries.get(uid);
    return entry && structuredClone(entry);
  }

  /** Every UID's current entry (copies). */
  all(): [string, StatusEntry][] {
    return [...this.entries].map(([uid, entry]) => [uid, structuredClone(entry)]);
  }

  /**
   * SetPodStatus: the pod worker's newly generated status. A pod being
   * deleted always gets a new version, so its termination is seen.
   */
  setPodStatus(uid: string, pod: StatusPod, status: PodStatus, now: number): ApplyResult {
    this.remember(uid, pod);
    return this.updateStatus(uid, pod, structuredClone(status), now, { force: pod.deletionTimestamp !== undefined, finished: false });
  }

  /**
   * SetContainerReadiness: a readiness probe result. The container's ready
   * flag is merged into the current status and the Ready and ContainersReady
   * conditions are recomputed from it.
   */
  setContainerReadiness(uid: string, containerId: string, ready: boolean, now: number): ApplyResult {
    return this.setProbeResult(uid, containerId, 'readiness', ready, now);
  }

  /** SetContainerStartup: a startup probe result, merged into the container's `started`. */
  setContainerStartup(uid: string, containerId: string, started: boolean, now: number): ApplyResult {
    return this.setProbeResult(uid, containerId, 'startup', started, now);
  }

  /**
   * A probe result merged into the pod's current status (withContainerProbeResult); nothing to set when the pod has
   * not synced, the container is unknown, or the flag says so already.
   */
  private setProbeResult(uid: string, containerId: string, probeType: 'readiness' | 'startup', ok: boolean, now: number): ApplyResult {
    const current = this.entries.get(uid);
    if (!current) return { changed: false, dropped: `container ${probeType} changed before pod ${uid} has synced` };
    const pod = this.podOf(uid, current);
    const status = withContainerProbeResult(current.status, pod.spec ?? specFromStatus(current.status), containerId, probeType, ok);
    if (!status) return { changed: false, entry: structuredClone(current), dropped: `container ${probeType} changed for unknown container ${containerId}` };
    if (status === current.status) return { changed: false, entry: structuredClone(current) };
    return this.updateStatus(uid, pod, status, now, { force: false, finished: false });
  }

  /**
   * TerminatePod: the pod's containers are gone. Each container not known to
   * have terminated becomes terminated with exit code 137, reason
   * ContainerStatusUnknown (regular containers once the pod had initialized;
   * init containers up to the last one that started), and a non-static pod
   * still Pending or Running becomes Failed. Always a new version.
   *
   * `status` is the pod's status as its source knows it (upstream's
   * pod.Status): the base when nothing is cached yet.
   */
  terminatePod(uid: string, pod: StatusPod, status: PodStatus, now: number): ApplyResult {
    this.remember(uid, pod);
    const known = this.podOf(uid, undefined);
    const base = this.entries.get(uid)?.status ?? status;
    const apiPod: Pod = {
      metadata: { name: known.name, namespace: known.namespace, ...(known.annotations ? { annotations: known.annotations } : {}) },
      spec: known.spec ?? specFromStatus(base),
    };
    // Upstream decides hasPodInitialized on the API pod's status; we have none
    // for a static pod, so the status being terminated (the newest) decides.
    const terminated = terminatePodStatus(apiPod, base, now);
    return this.updateStatus(uid, known, terminated, now, { force: true, finished: true }, status);
  }

  /** RemoveOrphanedStatuses: forget every UID not in `keep`. Returns the UIDs removed. */
  removeOrphanedStatuses(keep: Set<string>): string[] {
    const removed: string[] = [];
    for (const uid of [...this.entries.keys()]) {
      if (keep.has(uid)) continue;
      this.entries.delete(uid);
      this.pods.delete(uid);
      removed.push(uid);
    }
    return removed;
  }

  /** deletePodStatus: forget one UID. */
  remove(uid: string): boolean {
    this.pods.delete(uid);
    return this.entries.delete(uid);
  }

  private remember(uid: string, pod: StatusPod): void {
    const before = this.pods.get(uid);
    // A caller that leaves the spec out keeps the one we know.
    this.pods.set(uid, { ...pod, spec: pod.spec ?? before?.spec, annotations: pod.annotations ?? before?.annotations });
  }

  private podOf(uid: string, entry: StatusEntry | undefined): StatusPod {
    return this.pods.get(uid) ?? { name: entry?.podName ?? '', namespace: entry?.podNamespace ?? '' };
  }

  /**
   * updateStatusInternal. `podStatus` is the pod's own status, the old status
   * when nothing is cached (upstream's pod.Status or the mirror pod's).
   */
  private updateStatus(uid: string, pod: StatusPod, status: PodStatus, now: number, opts: { force: boolean; finished: boolean }, podStatus: PodStatus = {}): ApplyResult {
    const cached = this.entries.get(uid);
    const oldStatus = cached?.status ?? podStatus;
    const isStatic = isStaticPod({ metadata: { ...(pod.annotations ? { annotations: pod.annotations } : {}) }, spec: { containers: [] } });
    let finished = opts.finished;
    // Upstream: "Got unexpected podIsFinished=false, while podIsFinished=true in status cache".
    if (cached?.podIsFinished && !finished && !isStatic) finished = true;

    // A terminal phase is never left. Upstream forces the phase back in
    // generateAPIPodStatus; here the status manager is the one place every
    // writer goes through, so it refuses the update instead.
    if (isPodPhaseTerminal(oldStatus.phase) && status.phase !== oldStatus.phase) {
      return this.refuse(cached, `pod ${pod.namespace}/${pod.name} is ${oldStatus.phase}: phase may not change to ${status.phase ?? '<none>'}`);
    }
    const illegal = checkContainerStateTransition(oldStatus, status, pod.spec);
    if (illegal !== undefined) return this.refuse(cached, illegal);

    updateLastTransitionTimes(status.conditions, oldStatus.conditions, now);
    if (oldStatus.startTime) status.startTime = oldStatus.startTime;
    else status.startTime ||= rfc3339(now);
    normalizeStatus(pod.spec, status);

    if (cached && !opts.force && isPodStatusByKubeletEqual(cached.status, status)) {
      return { changed: false, entry: structuredClone(cached) };
    }
    const entry: StatusEntry = {
      version: (cached?.version ?? 0) + 1,
      podName: pod.name,
      podNamespace: pod.namespace,
      status,
      ...(finished ? { podIsFinished: true } : {}),
    };
    this.entries.set(uid, entry);
    return { changed: true, entry: structuredClone(entry) };
  }

  private refuse(cached: StatusEntry | undefined, dropped: string): ApplyResult {
    return { changed: false, ...(cached ? { entry: structuredClone(cached) } : {}), dropped };
  }
}
