/**
 * kubectl's human-readable output for pods, as pure functions of the pod and
 * the time: `kubectl get pods` (k8s.io/kubernetes pkg/printers/internalversion
 * printPod, the table printer's tabwriter) and `kubectl describe pod`
 * (k8s.io/kubectl pkg/describe DescribePod, its PrefixWriter and tabwriter).
 * The CLI reads pods from the status manager's API and prints these.
 *
 * Times in the output are UTC: kubectl prints the reader's local zone.
 */
import type { Container, ContainerState, ContainerStatus, EventMessage, Pod, Probe, Toleration, Volume } from '@app/contracts';
import { getPodQOS, isPodPhaseTerminal, isRestartableInitContainer, joinHostPort, parseQuantity } from '@app/kube';

/** A pod as the list API returns it: spec and status. */
export interface ListedPod {
  pod: Pod;
}

// ---------------------------------------------------------------------------
// text/tabwriter
// ---------------------------------------------------------------------------

interface TabwriterOptions {
  /** Minimal width of a column, padding included. */
  minWidth: number;
  /** Spaces added to the widest cell of a column. */
  padding: number;
}

/** The table printer's writer: printers.GetNewTabWriter (minwidth 6, padding 3). */
const TABLE_TABWRITER: TabwriterOptions = { minWidth: 6, padding: 3 };
/** describe's tabbedString (minwidth 0, padding 2). */
const DESCRIBE_TABWRITER: TabwriterOptions = { minWidth: 0, padding: 2 };

const runeCount = (s: string): number => [...s].length;

/**
 * Go's text/tabwriter with a space pad character and no flags: a cell is
 * text ended by a tab; a column block is a run of consecutive lines that
 * have a cell in that column, and each of its cells is padded to the block's
 * widest cell plus the padding. The last cell of a line is not in a column.
 */
export function tabwrite(text: string, opts: TabwriterOptions): string {
  const lines = text.split('\n').map((l) => l.split('\t'));
  const widths: number[] = [];
  const out: string[] = [];

  const writeLines = (line0: number, line1: number): void => {
    for (let i = line0; i < line1; i++) {
      const cells = lines[i] ?? [];
      let s = '';
      cells.forEach((cell, j) => {
        s += cell;
        const width = widths[j];
        if (width !== undefined) s += ' '.repeat(Math.max(0, width - runeCount(cell)));
      });
      out.push(s);
    }
  };

  const format = (from: number, line1: number): void => {
    let line0 = from;
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= (lines[t]?.length ?? 0) - 1) continue;
      // A cell in this column: the block runs while the lines have one.
      writeLines(line0, t);
      line0 = t;
      let width = opts.minWidth;
      for (; t < line1; t++) {
        const cells = lines[t] ?? [];
        if (column >= cells.length - 1) break;
        width = Math.max(width, runeCount(cells[column] ?? '') + opts.padding);
      }
      widths.push(width);
      format(line0, t);
      widths.pop();
      line0 = t;
    }
    writeLines(line0, line1);
  };

  format(0, lines.length);
  return out.join('\n');
}

// ---------------------------------------------------------------------------
// Times
// ---------------------------------------------------------------------------

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * duration.HumanDuration: ~2-3 significant figures (5s, 119s, 3m20s, 15m,
 * 5h30m, 30h, 2d3h, 45d, 2y30d, 9y). Up to a second into the future reads
 * as 0s (clock skew); more is <invalid>.
 */
export function formatAge(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** A metav1.Time as ms since the epoch; undefined for the zero time (absent or unreadable). */
function timeOf(t: string | null | undefined): number | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** translateTimestampSince */
function since(t: string | null | undefined, now: number): string {
  const ms = timeOf(t);
  return ms === undefined ? '<unknown>' : formatAge(now - ms);
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n: number): string => String(n).padStart(2, '0');

/** time.RFC1123Z in UTC ("Mon, 02 Jan 2006 15:04:05 +0000"); Go's zero time when unset. */
function rfc1123z(t: string | null | undefined): string {
  const ms = timeOf(t);
  if (ms === undefined) return 'Mon, 01 Jan 0001 00:00:00 +0000';
  const d = new Date(ms);
  return `${DAYS[d.getUTCDay()] ?? ''}, ${pad2(d.getUTCDate())} ${MONTHS[d.getUTCMonth()] ?? ''} ${String(d.getUTCFullYear()).padStart(4, '0')} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} +0000`;
}

// ---------------------------------------------------------------------------
// kubectl get pods (printPod)
// ---------------------------------------------------------------------------

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
 */
export function printPodTable(pods: Pod[], now: number, opts: { wide?: boolean; noHeaders?: boolean }): string {
  if (pods.length === 0) return '';
  const rows: string[][] = [];
  if (!opts.noHeaders) rows.push(opts.wide ? [...POD_COLUMNS, ...POD_WIDE_COLUMNS] : POD_COLUMNS);
  for (const pod of pods) {
    const row = [pod.metadata.name ?? '', podReadyColumn(pod), podStatusColumn(pod), podRestartsColumn(pod, now), since(pod.metadata.creationTimestamp, now)];
    if (opts.wide) {
      // The status has no nominatedNodeName: the scheduler sets it, and we have none.
      row.push(pod.status?.podIPs?.[0]?.ip || '<none>', pod.spec.nodeName || '<none>', '<none>', readinessGatesColumn(pod));
    }
    rows.push(row);
  }
  return tabwrite(rows.map((r) => `${r.join('\t')}\n`).join(''), TABLE_TABWRITER);
}

// ---------------------------------------------------------------------------
// kubectl describe pod
// ---------------------------------------------------------------------------

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
  const indexed = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fieldPath);
  if (indexed) return (indexed[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[indexed[2] ?? ''] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
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
