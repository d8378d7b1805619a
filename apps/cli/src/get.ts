/**
 * `kubectl get pods`: the pod table (k8s.io/kubernetes
 * pkg/printers/internalversion printers.go printPod) as a pure function of
 * the pods and the time, written with the table printer's tabwriter.
 */
import type { Container, ContainerStatus, Pod } from '@app/contracts';
import { isPodPhaseTerminal, isRestartableInitContainer } from '@app/kube';
import { TABLE_TABWRITER, tabwrite } from './tabwriter.js';
import { formatAge, since, timeOf } from './time.js';

/** node.NodeUnreachablePodReason */
const NodeUnreachablePodReason = 'NodeLost';

function conditionTrue(pod: Pod, type: string): boolean {
  return pod.status?.conditions?.find((c) => c.type === type)?.status === 'True';
}

/** isPodInitializedConditionTrue: the first Initialized condition decides. */
function isPodInitializedConditionTrue(pod: Pod): boolean {
  return pod.status?.conditions?.find((c) => c.type === 'Initialized')?.status === 'True';
}

interface PodColumns {
  ready: string;
  status: string;
  restarts: number;
  /** The last restart (the newest lastState.terminated.finishedAt of the containers counted); undefined for none. */
  lastRestart: number | undefined;
}

/** The READY, STATUS and RESTARTS columns, as printPod works them out. */
function podColumns(pod: Pod): PodColumns {
  const status = pod.status ?? {};
  let restarts = 0;
  let sidecarRestarts = 0;
  let totalContainers = pod.spec.containers.length;
  let readyContainers = 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;
  const later = (current: number | undefined, s: ContainerStatus): number | undefined => {
    const finished = s.lastState?.terminated ? timeOf(s.lastState.terminated.finishedAt) : undefined;
    return finished !== undefined && (current === undefined || current < finished) ? finished : current;
  };

  let reason: string = status.phase ?? '';
  if (status.reason) reason = status.reason;
  // A pod waiting for its scheduling gates.
  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initContainers = new Map<string, Container>();
  for (const c of pod.spec.initContainers ?? []) {
    initContainers.set(c.name, c);
    if (isRestartableInitContainer(c)) totalContainers++;
  }

  let initializing = false;
  for (const [i, c] of (status.initContainerStatuses ?? []).entries()) {
    restarts += c.restartCount;
    lastRestart = later(lastRestart, c);
    const sidecar = isRestartableInitContainer(initContainers.get(c.name));
    if (sidecar) {
      sidecarRestarts += c.restartCount;
      lastSidecarRestart = later(lastSidecarRestart, c);
    }
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (sidecar && c.started === true) {
      if (c.ready) readyContainers++;
      continue;
    }
    if (terminated) {
      // Initialization failed.
      if (!terminated.reason) reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode}`;
      else reason = `Init:${terminated.reason}`;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${pod.spec.initContainers?.length ?? 0}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || isPodInitializedConditionTrue(pod)) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      if (!c) continue;
      restarts += c.restartCount;
      lastRestart = later(lastRestart, c);
      const terminated = c.state?.terminated;
      if (c.state?.waiting?.reason) {
        reason = c.state.waiting.reason;
      } else if (terminated?.reason) {
        reason = terminated.reason;
      } else if (terminated) {
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      } else if (c.ready && c.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // Back to Running if a container still runs.
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  if (pod.metadata.deletionTimestamp && status.reason === NodeUnreachablePodReason) reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && !isPodPhaseTerminal(status.phase)) reason = 'Terminating';

  return { ready: `${readyContainers}/${totalContainers}`, status: reason, restarts, lastRestart };
}

/** kubectl's STATUS column: the phase, or the reason that says more. */
export function podStatusColumn(pod: Pod): string {
  return podColumns(pod).status;
}

/** kubectl's READY column: ready containers (sidecars included) over all of them. */
export function podReadyColumn(pod: Pod): string {
  return podColumns(pod).ready;
}

/** kubectl's RESTARTS column: the count, and how long ago the last restart was ("3 (25s ago)"). */
export function podRestartsColumn(pod: Pod, now: number): string {
  const { restarts, lastRestart } = podColumns(pod);
  return restarts !== 0 && lastRestart !== undefined ? `${restarts} (${formatAge(now - lastRestart)} ago)` : String(restarts);
}

function readinessGatesColumn(pod: Pod): string {
  const gates = pod.spec.readinessGates ?? [];
  if (gates.length === 0) return '<none>';
  let trueConditions = 0;
  for (const gate of gates) {
    if (pod.status?.conditions?.find((c) => c.type === gate.conditionType)?.status === 'True') trueConditions++;
  }
  return `${trueConditions}/${gates.length}`;
}

const POD_COLUMNS = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'];
const POD_WIDE_COLUMNS = ['IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'];

/**
 * `kubectl get pods` ([-o wide], [--no-headers]) in the given order. No
 * pods print nothing (kubectl says "No resources found" on stderr).
 * `namespace` puts kubectl's NAMESPACE column first (its -A); `node` adds
 * NODE after AGE without -o wide (the fleet view: which node runs it).
 */
export function printPodTable(pods: Pod[], now: number, opts: { wide?: boolean; noHeaders?: boolean; namespace?: boolean; node?: boolean }): string {
  if (pods.length === 0) return '';
  const rows: string[][] = [];
  const nodeColumn = opts.node === true && opts.wide !== true;
  if (!opts.noHeaders) rows.push([...(opts.namespace ? ['NAMESPACE'] : []), ...POD_COLUMNS, ...(opts.wide ? POD_WIDE_COLUMNS : nodeColumn ? ['NODE'] : [])]);
  for (const pod of pods) {
    const row = [pod.metadata.name ?? '', podReadyColumn(pod), podStatusColumn(pod), podRestartsColumn(pod, now), since(pod.metadata.creationTimestamp, now)];
    if (opts.namespace) row.unshift(pod.metadata.namespace ?? '');
    if (opts.wide) {
      // The status has no nominatedNodeName: the scheduler sets it, and we have none.
      row.push(pod.status?.podIPs?.[0]?.ip || '<none>', pod.spec.nodeName || '<none>', '<none>', readinessGatesColumn(pod));
    } else if (nodeColumn) row.push(pod.spec.nodeName || '<none>');
    rows.push(row);
  }
  return tabwrite(rows.map((r) => `${r.join('\t')}\n`).join(''), TABLE_TABWRITER);
}
