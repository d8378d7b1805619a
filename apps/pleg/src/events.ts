/**
 * The generic PLEG's core (pkg/kubelet/pleg/generic.go), pure: what the
 * runtime shows, grouped by pod, and the lifecycle events that one view of
 * a pod against the next one yields.
 */
import type { PodLifecycleEventMessage, PodLifecycleEventType } from '@app/contracts';
import { MessageTypes } from '@app/contracts';
import type { Container, PodSandbox } from '@app/cri';
import { KubeletLabels } from '@app/kube';

/** plegContainerState */
export type PlegContainerState = 'running' | 'exited' | 'unknown' | 'non-existent';

/** A pod as one relist saw it: the state of each of its containers and sandboxes, by ID. */
export interface PodView {
  uid: string;
  name: string;
  namespace: string;
  states: Map<string, PlegContainerState>;
  sandboxIds: string[];
  containerIds: string[];
}

export function containerState(criState: string | undefined): PlegContainerState {
  switch (criState) {
    case 'CONTAINER_RUNNING':
    case 'SANDBOX_READY':
      return 'running';
    case 'CONTAINER_EXITED':
    case 'SANDBOX_NOTREADY':
      return 'exited';
    case 'CONTAINER_CREATED':
    case 'CONTAINER_UNKNOWN':
    default:
      return 'unknown';
  }
}

/**
 * Groups sandboxes and containers by the pod UID label the kubelet puts on
 * them; with `node`, only those its stack made (KubeletLabels.node).
 */
export function groupByPod(sandboxes: readonly PodSandbox[], containers: readonly Container[], node?: string): Map<string, PodView> {
  const mine = (labels: Record<string, string>) => node === undefined || labels[KubeletLabels.node] === node;
  const pods = new Map<string, PodView>();
  const viewOf = (uid: string, labels: Record<string, string>, meta?: { name?: string; namespace?: string } | null) => {
    let v = pods.get(uid);
    if (!v) {
      v = { uid, name: labels[KubeletLabels.podName] ?? meta?.name ?? '', namespace: labels[KubeletLabels.podNamespace] ?? meta?.namespace ?? '', states: new Map(), sandboxIds: [], containerIds: [] };
      pods.set(uid, v);
    }
    return v;
  };
  for (const sb of sandboxes) {
    const uid = sb.labels[KubeletLabels.podUid] ?? sb.metadata?.uid;
    if (!uid || !mine(sb.labels)) continue;
    const v = viewOf(uid, sb.labels, sb.metadata);
    v.states.set(sb.id, containerState(sb.state));
    v.sandboxIds.push(sb.id);
  }
  for (const c of containers) {
    const uid = c.labels[KubeletLabels.podUid];
    if (!uid || !mine(c.labels)) continue;
    const v = viewOf(uid, c.labels);
    v.states.set(c.id, containerState(c.state));
    v.containerIds.push(c.id);
  }
  return pods;
}

const event = (id: string, eventType: PodLifecycleEventType, data: string): PodLifecycleEventMessage => ({ type: MessageTypes.podLifecycleEvent, id, eventType, data });

/** generateEvents: one container's old state against its new one. */
export function generateEvents(podId: string, cid: string, oldState: PlegContainerState, newState: PlegContainerState): PodLifecycleEventMessage[] {
  if (oldState === newState) return [];
  switch (newState) {
    case 'running':
      return [event(podId, 'ContainerStarted', cid)];
    case 'exited':
      return [event(podId, 'ContainerDied', cid)];
    case 'unknown':
      return [event(podId, 'ContainerChanged', cid)];
    case 'non-existent':
      // A container that had died was reported then; one that vanished while running died too.
      return oldState === 'exited' ? [event(podId, 'ContainerRemoved', cid)] : [event(podId, 'ContainerDied', cid), event(podId, 'ContainerRemoved', cid)];
  }
}

/** Every event between two views of one pod (either may be absent). */
export function podEvents(uid: string, old: PodView | undefined, current: PodView | undefined): PodLifecycleEventMessage[] {
  const ids = new Set([...(old?.states.keys() ?? []), ...(current?.states.keys() ?? [])]);
  const out: PodLifecycleEventMessage[] = [];
  for (const id of ids) {
    out.push(...generateEvents(uid, id, old?.states.get(id) ?? 'non-existent', current?.states.get(id) ?? 'non-existent'));
  }
  return out;
}
