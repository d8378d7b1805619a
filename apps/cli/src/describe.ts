/**
 * `kubectl describe pod` (k8s.io/kubectl pkg/describe describe.go
 * DescribePod, its PrefixWriter and tabwriter) as a pure function of the
 * pod, its events and the time.
 */
import type { Container, ContainerState, ContainerStatus, EventMessage, Pod, Probe, Toleration, Volume } from '@app/contracts';
import { extractFieldPathAsString, getPodQOS, isObjectFieldPath, isPodPhaseTerminal, joinHostPort, parseQuantity } from '@app/kube';
import { DESCRIBE_TABWRITER, tabwrite } from './tabwriter.js';
import { rfc1123z, since, timeOf } from './time.js';

/** describe's PrefixWriter: each level indents two spaces; Flush ends a tabwriter block. */
class PrefixWriter {
  private readonly flushed: string[] = [];
  private pending = '';

  write(level: number, text: string): void {
    this.pending += '  '.repeat(level) + text;
  }

  flush(): void {
    this.flushed.push(tabwrite(this.pending, DESCRIBE_TABWRITER));
    this.pending = '';
  }

  toString(): string {
    this.flush();
    return this.flushed.join('');
  }
}

const L0 = 0;
const L1 = 1;
const L2 = 2;
const L3 = 3;

const stringOrNone = (s: string): string => (s.length > 0 ? s : '<none>');
const printBool = (b: boolean): string => (b ? 'True' : 'False');

/** printLabelsMultiline: sorted key=value lines, or <none>. */
function printLabelsMultiline(w: PrefixWriter, title: string, labels: Record<string, string> | undefined): void {
  w.write(L0, `${title}:\t`);
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) {
    w.write(L0, '<none>\n');
    return;
  }
  keys.forEach((key, i) => {
    if (i !== 0) w.write(L0, '\t');
    w.write(L0, `${key}=${labels?.[key] ?? ''}\n`);
  });
}

/** kubectl never shows the last-applied-configuration annotation. */
const SKIPPED_ANNOTATIONS: ReadonlySet<string> = new Set(['kubectl.kubernetes.io/last-applied-configuration']);
const MAX_ANNOTATION_LEN = 140;

/** printAnnotationsMultiline: long or multi-line values get lines of their own, cut at 138 characters. */
function printAnnotationsMultiline(w: PrefixWriter, title: string, annotations: Record<string, string> | undefined): void {
  w.write(L0, `${title}:\t`);
  const keys = Object.keys(annotations ?? {})
    .filter((k) => !SKIPPED_ANNOTATIONS.has(k))
    .sort();
  if (keys.length === 0) {
    w.write(L0, '<none>\n');
    return;
  }
  const indent = '\t';
  keys.forEach((key, i) => {
    if (i !== 0) w.write(L0, indent);
    const value = (annotations?.[key] ?? '').replace(/\n$/, '');
    if (value.length + key.length + 2 > MAX_ANNOTATION_LEN || value.includes('\n')) {
      w.write(L0, `${key}:\n`);
      for (const s of value.split('\n')) {
        const max = MAX_ANNOTATION_LEN - 2;
        w.write(L0, `${indent}  ${s.length > max ? `${s.slice(0, max)}...` : s}\n`);
      }
    } else {
      w.write(L0, `${key}: ${value}\n`);
    }
  });
}

/** printPodTolerationsMultiline: by key; key=value:effect, op=Exists, for Ns. */
function printTolerationsMultiline(w: PrefixWriter, title: string, tolerations: readonly Toleration[] | undefined): void {
  w.write(L0, `${title}:\t`);
  const sorted = [...(tolerations ?? [])].sort((a, b) => ((a.key ?? '') < (b.key ?? '') ? -1 : (a.key ?? '') > (b.key ?? '') ? 1 : 0));
  if (sorted.length === 0) {
    w.write(L0, '<none>\n');
    return;
  }
  sorted.forEach((t, i) => {
    if (i !== 0) w.write(L0, '\t');
    let s = t.key ?? '';
    if (t.value) s += `=${t.value}`;
    if (t.effect) s += `:${t.effect}`;
    // An operator Exists with no value tolerates everything it names (or everything at all).
    if (t.operator === 'Exists' && !t.value) s += t.key || t.effect ? ' op=Exists' : 'op=Exists';
    if (t.tolerationSeconds !== undefined) s += ` for ${t.tolerationSeconds}s`;
    w.write(L0, `${s}\n`);
  });
}

function describeStatus(w: PrefixWriter, stateName: string, state: ContainerState | undefined): void {
  if (state?.running) {
    w.write(L2, `${stateName}:\tRunning\n`);
    w.write(L3, `Started:\t${rfc1123z(state.running.startedAt)}\n`);
  } else if (state?.waiting) {
    w.write(L2, `${stateName}:\tWaiting\n`);
    if (state.waiting.reason) w.write(L3, `Reason:\t${state.waiting.reason}\n`);
  } else if (state?.terminated) {
    const t = state.terminated;
    w.write(L2, `${stateName}:\tTerminated\n`);
    if (t.reason) w.write(L3, `Reason:\t${t.reason}\n`);
    if (t.message) w.write(L3, `Message:\t${t.message}\n`);
    w.write(L3, `Exit Code:\t${t.exitCode}\n`);
    if (t.signal !== undefined && t.signal > 0) w.write(L3, `Signal:\t${t.signal}\n`);
    w.write(L3, `Started:\t${rfc1123z(t.startedAt)}\n`);
    w.write(L3, `Finished:\t${rfc1123z(t.finishedAt)}\n`);
  } else {
    w.write(L2, `${stateName}:\tWaiting\n`);
  }
}

/** DescribeProbe */
export function describeProbe(probe: Probe): string {
  const attrs = `delay=${probe.initialDelaySeconds ?? 0}s timeout=${probe.timeoutSeconds ?? 0}s period=${probe.periodSeconds ?? 0}s #success=${probe.successThreshold ?? 0} #failure=${probe.failureThreshold ?? 0}`;
  if (probe.exec) return `exec [${(probe.exec.command ?? []).join(' ')}] ${attrs}`;
  if (probe.httpGet) {
    const g = probe.httpGet;
    const port = String(g.port);
    const host = port.length > 0 ? joinHostPort(g.host ?? '', port) : (g.host ?? '');
    const scheme = (g.scheme ?? '').toLowerCase();
    const path = g.path ?? '';
    const url = `${scheme ? `${scheme}:` : ''}//${host}${path !== '' && !path.startsWith('/') ? `/${path}` : path}`;
    return `http-get ${url} ${attrs}`;
  }
  if (probe.tcpSocket) return `tcp-socket ${probe.tcpSocket.host ?? ''}:${String(probe.tcpSocket.port)} ${attrs}`;
  if (probe.grpc) return `grpc <pod>:${probe.grpc.port} ${probe.grpc.service ?? ''} ${attrs}`;
  return `unknown ${attrs}`;
}

/** fieldpath.ExtractFieldPathAsString for the downward API paths a container env may use. */
function resolveFieldRef(pod: Pod, fieldPath: string): string {
  if (fieldPath.startsWith('metadata.')) return isObjectFieldPath(fieldPath) && fieldPath !== 'metadata.labels' && fieldPath !== 'metadata.annotations' ? extractFieldPathAsString(pod, fieldPath) : '';
  switch (fieldPath) {
    case 'spec.nodeName':
      return pod.spec.nodeName ?? '';
    case 'status.hostIP':
      return pod.status?.hostIP ?? '';
    case 'status.hostIPs':
      return (pod.status?.hostIPs ?? []).map((i) => i.ip).join(',');
    case 'status.podIP':
      return pod.status?.podIP ?? '';
    case 'status.podIPs':
      return (pod.status?.podIPs ?? []).map((i) => i.ip).join(',');
    default:
      return '';
  }
}

function describeContainers(w: PrefixWriter, pod: Pod, label: string, containers: readonly Container[], statuses: readonly ContainerStatus[] | undefined): void {
  w.write(L0, `${label}:${containers.length === 0 ? ' <none>' : ''}\n`);
  for (const c of containers) {
    const status = statuses?.find((s) => s.name === c.name);
    w.write(L1, `${c.name}:\n`);
    if (status) w.write(L2, `Container ID:\t${status.containerID ?? ''}\n`);
    w.write(L2, `Image:\t${c.image ?? ''}\n`);
    if (status) w.write(L2, `Image ID:\t${status.imageID}\n`);
    const ports = (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`).join(', ');
    w.write(L2, ports.includes(',') ? `Ports:\t${ports}\n` : `Port:\t${stringOrNone(ports)}\n`);
    const hostPorts = (c.ports ?? []).map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`).join(', ');
    w.write(L2, hostPorts.includes(',') ? `Host Ports:\t${hostPorts}\n` : `Host Port:\t${stringOrNone(hostPorts)}\n`);
    for (const [title, words] of [['Command', c.command], ['Args', c.args]] as const) {
      if (!words || words.length === 0) continue;
      w.write(L2, `${title}:\n`);
      for (const word of words) for (const line of word.split('\n')) w.write(L3, `${line}\n`);
    }
    if (status) {
      describeStatus(w, 'State', status.state);
      if (status.lastState?.terminated) describeStatus(w, 'Last State', status.lastState);
      w.write(L2, `Ready:\t${printBool(status.ready)}\n`);
      w.write(L2, `Restart Count:\t${status.restartCount}\n`);
    }
    for (const [title, list] of [['Limits', c.resources?.limits], ['Requests', c.resources?.requests]] as const) {
      const names = Object.keys(list ?? {}).sort();
      if (names.length > 0) w.write(L2, `${title}:\n`);
      for (const name of names) w.write(L3, `${name}:\t${list?.[name] ?? ''}\n`);
    }
    if (c.livenessProbe) w.write(L2, `Liveness:\t${describeProbe(c.livenessProbe)}\n`);
    if (c.readinessProbe) w.write(L2, `Readiness:\t${describeProbe(c.readinessProbe)}\n`);
    if (c.startupProbe) w.write(L2, `Startup:\t${describeProbe(c.startupProbe)}\n`);
    w.write(L2, `Environment:${(c.env ?? []).length === 0 ? '\t<none>' : ''}\n`);
    for (const e of c.env ?? []) {
      if (e.valueFrom?.fieldRef) {
        const ref = e.valueFrom.fieldRef;
        w.write(L3, `${e.name}:\t${resolveFieldRef(pod, ref.fieldPath)} (${ref.apiVersion ?? ''}:${ref.fieldPath})\n`);
      } else if (!e.valueFrom) {
        (e.value ?? '').split('\n').forEach((line, i) => w.write(L3, i === 0 ? `${e.name}:\t${line}\n` : `\t${line}\n`));
      }
    }
    const mounts = [...(c.volumeMounts ?? [])].sort((a, b) => (a.mountPath < b.mountPath ? -1 : a.mountPath > b.mountPath ? 1 : 0));
    w.write(L2, `Mounts:${mounts.length === 0 ? '\t<none>' : ''}\n`);
    for (const m of mounts) {
      const flags = [m.readOnly ? 'ro' : 'rw', ...(m.subPath ? [`path=${JSON.stringify(m.subPath)}`] : [])];
      w.write(L3, `${m.mountPath} from ${m.name} (${flags.join(',')})\n`);
    }
  }
}

function isPositiveQuantity(q: string): boolean {
  try {
    return parseQuantity(q) > 0;
  } catch {
    return false;
  }
}

function describeVolumes(w: PrefixWriter, volumes: readonly Volume[] | undefined): void {
  if (!volumes || volumes.length === 0) {
    w.write(L0, 'Volumes:\t<none>\n');
    return;
  }
  w.write(L0, 'Volumes:\n');
  for (const v of volumes) {
    w.write(L1, `${v.name}:\n`);
    if (v.hostPath) {
      w.write(L2, `Type:\tHostPath (bare host directory volume)\n    Path:\t${v.hostPath.path}\n    HostPathType:\t${v.hostPath.type ?? '<none>'}\n`);
    } else if (v.emptyDir) {
      const sizeLimit = v.emptyDir.sizeLimit !== undefined && isPositiveQuantity(v.emptyDir.sizeLimit) ? v.emptyDir.sizeLimit : '<unset>';
      w.write(L2, `Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t${v.emptyDir.medium ?? ''}\n    SizeLimit:\t${sizeLimit}\n`);
    } else {
      w.write(L1, '<unknown>\n');
    }
  }
}

/** DescribeEvents: oldest first, in a table of its own. */
function describeEvents(w: PrefixWriter, events: readonly EventMessage[], now: number): void {
  if (events.length === 0) {
    w.write(L0, 'Events:\t<none>\n');
    return;
  }
  w.flush();
  const sorted = events
    .map((e, i) => ({ e, i, at: timeOf(e.timestamp) ?? -Infinity }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map(({ e }) => e);
  w.write(L0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n');
  w.write(L1, '----\t------\t----\t----\t-------\n');
  for (const e of sorted) {
    w.write(L1, `${e.eventType}\t${e.reason}\t${since(e.timestamp, now)}\t${e.source.component}\t${e.message.trim()}\n`);
  }
}

/** `kubectl describe pod`: the pod's spec and status, and its events. */
export function describePod(pod: Pod, events: EventMessage[], now: number): string {
  const w = new PrefixWriter();
  const { metadata: meta, spec } = pod;
  const status = pod.status ?? {};
  w.write(L0, `Name:\t${meta.name ?? ''}\n`);
  w.write(L0, `Namespace:\t${meta.namespace ?? ''}\n`);
  if (spec.priority !== undefined) w.write(L0, `Priority:\t${spec.priority}\n`);
  if (spec.priorityClassName) w.write(L0, `Priority Class Name:\t${spec.priorityClassName}\n`);
  w.write(L0, spec.nodeName ? `Node:\t${spec.nodeName}/${status.hostIP ?? ''}\n` : 'Node:\t<none>\n');
  if (status.startTime) w.write(L0, `Start Time:\t${rfc1123z(status.startTime)}\n`);
  printLabelsMultiline(w, 'Labels', meta.labels);
  printAnnotationsMultiline(w, 'Annotations', meta.annotations);
  if (meta.deletionTimestamp && !isPodPhaseTerminal(status.phase)) {
    w.write(L0, `Status:\tTerminating (lasts ${since(meta.deletionTimestamp, now)})\n`);
    // kubectl assumes the API server set deletionGracePeriodSeconds with the timestamp.
    w.write(L0, `Termination Grace Period:\t${meta.deletionGracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30}s\n`);
  } else {
    w.write(L0, `Status:\t${status.phase ?? ''}\n`);
  }
  if (status.reason) w.write(L0, `Reason:\t${status.reason}\n`);
  if (status.message) w.write(L0, `Message:\t${status.message}\n`);
  w.write(L0, `IP:\t${status.podIP ?? ''}\n`);
  const podIPs = status.podIPs ?? [];
  if (podIPs.length === 0) {
    w.write(L0, 'IPs:\t<none>\n');
  } else {
    w.write(L0, 'IPs:\n');
    for (const ip of podIPs) w.write(L1, `IP:\t${ip.ip}\n`);
  }
  const controller = meta.ownerReferences?.find((r) => r.controller);
  if (controller) w.write(L0, `Controlled By:\t${controller.kind}/${controller.name}\n`);

  if ((spec.initContainers ?? []).length > 0) describeContainers(w, pod, 'Init Containers', spec.initContainers ?? [], status.initContainerStatuses);
  describeContainers(w, pod, 'Containers', spec.containers, status.containerStatuses);
  const gates = spec.readinessGates ?? [];
  if (gates.length > 0) {
    w.write(L0, 'Readiness Gates:\n  Type\tStatus\n');
    for (const g of gates) {
      w.write(L1, `${g.conditionType} \t${status.conditions?.find((c) => c.type === g.conditionType)?.status ?? '<none>'} \n`);
    }
  }
  const conditions = status.conditions ?? [];
  if (conditions.length > 0) {
    w.write(L0, 'Conditions:\n  Type\tStatus\n');
    for (const c of conditions) w.write(L1, `${c.type} \t${c.status} \n`);
  }
  describeVolumes(w, spec.volumes);
  w.write(L0, `QoS Class:\t${status.qosClass ?? getPodQOS(pod)}\n`);
  printLabelsMultiline(w, 'Node-Selectors', spec.nodeSelector);
  printTolerationsMultiline(w, 'Tolerations', spec.tolerations);
  describeEvents(w, events, now);
  return w.toString();
}
