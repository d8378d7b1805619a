/**
 * Fixtures for the status generation specs (pod-status, pod-phase, terminate,
 * qos): a fixed NOW, runtime containers and sandboxes, pods, and checks on
 * the generated status. Built on the lib's runtime status fixtures
 * (./testing.ts), with this family's pod (default/web) and times around NOW.
 */
import assert from 'node:assert/strict';
import type { Container, ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from '@app/contracts';
import type { PodSandboxStatus } from '@app/cri';
import type { ContainerWaitingReason, StatusInputs } from './pod-status.js';
import type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus } from './runtime-status.js';
import { ConfigSourceAnnotation } from './static-pod.js';
import { runtimeContainerStatus, sandboxStatus } from './testing.js';

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

export const NOW = Date.parse('2026-11-29T08:00:00Z');
/** ms, `seconds` before NOW. */
export const ago = (seconds: number): number => NOW - seconds * 1000;
export const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
export const ns = (ms: number): string => (BigInt(ms) * 1_000_000n).toString();

export const IMG = 'localhost/kubelet-split/busybox:1.35';
export const IMAGE_REF = 'sha256:0b1d3c5a7e';
export const HOST_IP = '192.168.50.10';
export const POD_IP = '10.88.77.5';

export interface SandboxOpts {
  id?: string;
  ready?: boolean;
  ip?: string;
  createdAt?: number;
  hostNetwork?: boolean;
}

export function sandbox(o: SandboxOpts = {}): PodSandboxStatus {
  return sandboxStatus(o.id ?? 'sb-1', {
    podName: 'web',
    ready: o.ready,
    createdAt: ns(o.createdAt ?? ago(120)),
    ip: o.ip ?? (o.hostNetwork ? '' : POD_IP),
    netns: o.hostNetwork ? 'NODE' : 'POD',
  });
}

export interface CtrOpts {
  id?: string;
  exitCode?: number;
  reason?: string;
  message?: string;
  createdAt?: number;
  startedAt?: number;
  finishedAt?: number;
  restartCount?: number;
  user?: RuntimeContainerStatus['user'];
}

/** One runtime container instance; its ID is `<name>-<restartCount>` unless given. */
export function rc(name: string, state: RuntimeContainerState, o: CtrOpts = {}): RuntimeContainerStatus {
  const restartCount = o.restartCount ?? 0;
  const createdAt = o.createdAt ?? ago(100);
  return runtimeContainerStatus(name, state, {
    id: o.id ?? `${name}-${restartCount}`,
    createdAt,
    startedAt: o.startedAt ?? (state === 'created' ? 0 : createdAt + 1000),
    finishedAt: o.finishedAt ?? (state === 'exited' ? createdAt + 10_000 : 0),
    exitCode: o.exitCode ?? 0,
    reason: o.reason ?? (state === 'exited' ? (o.exitCode ? 'Error' : 'Completed') : ''),
    message: o.message ?? '',
    image: IMG,
    imageRef: IMAGE_REF,
    hash: 'h',
    restartCount,
    ...(o.user ? { user: o.user } : {}),
  });
}

export function runtime(containers: RuntimeContainerStatus[], sandboxes: PodSandboxStatus[] = [sandbox()]): RuntimePodStatus {
  const ready = sandboxes.find((s) => s.state === 'SANDBOX_READY' && s.network?.ip);
  return { uid: 'uid-1', name: 'web', namespace: 'default', ips: ready?.network ? [ready.network.ip] : [], sandboxStatuses: sandboxes, containerStatuses: containers, timestamp: NOW };
}

export const ctr = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: IMG, ...extra });
export const sidecar = (name: string, extra: Partial<Container> = {}): Container => ctr(name, { restartPolicy: 'Always', ...extra });
export const probe = { exec: { command: ['true'] }, periodSeconds: 1 };

export interface PodOpts {
  containers?: Container[];
  initContainers?: Container[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  readinessGates?: string[];
  status?: PodStatus;
  hostNetwork?: boolean;
  deleted?: boolean;
  staticPod?: boolean;
}

export function mkPod(o: PodOpts = {}): Pod {
  return {
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: 'uid-1',
      ...(o.staticPod ? { annotations: { [ConfigSourceAnnotation]: 'file' } } : {}),
      ...(o.deleted ? { deletionTimestamp: iso(ago(5)) } : {}),
    },
    spec: {
      containers: o.containers ?? [ctr('app')],
      ...(o.initContainers ? { initContainers: o.initContainers } : {}),
      ...(o.restartPolicy ? { restartPolicy: o.restartPolicy } : {}),
      ...(o.readinessGates ? { readinessGates: o.readinessGates.map((conditionType) => ({ conditionType })) } : {}),
      ...(o.hostNetwork ? { hostNetwork: true } : {}),
    },
    ...(o.status ? { status: o.status } : {}),
  };
}

export type Results = Record<string, boolean>;

export function inputs(pod: Pod, rt: RuntimePodStatus, extra: Partial<StatusInputs> & { readinessById?: Results; startupById?: Results; reasons?: Record<string, [string, string]> } = {}): StatusInputs {
  const { readinessById = {}, startupById = {}, reasons = {}, ...rest } = extra;
  const reason = (name: string): ContainerWaitingReason | undefined => {
    const r = reasons[name];
    return r ? { reason: r[0], message: r[1] } : undefined;
  };
  return {
    pod,
    runtime: rt,
    now: NOW,
    hostIP: HOST_IP,
    readiness: (id) => readinessById[id],
    startup: (id) => startupById[id],
    waitingReasons: reason,
    ...rest,
  };
}

/** "True", "False Reason" or "False Reason: message". */
export function summary(c: PodCondition): string {
  return `${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`;
}

export const ALL_TRUE = { PodReadyToStartContainers: 'True', Initialized: 'True', Ready: 'True', ContainersReady: 'True', PodScheduled: 'True' };

export function conditionsOf(s: PodStatus): Record<string, string> {
  return Object.fromEntries((s.conditions ?? []).map((c) => [c.type, summary(c)]));
}

export function pick<T extends object>(actual: T, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (actual as Record<string, unknown>)[k]]));
}

export function statusNamed(list: ContainerStatus[] | undefined, name: string): ContainerStatus {
  const s = list?.find((x) => x.name === name);
  assert.ok(s, `no status for container ${name}`);
  return s;
}

export interface Want {
  phase: PodPhase;
  reason?: string;
  message?: string;
  conditions?: Record<string, string>;
  /** Fields to compare, by container name. */
  containers?: Record<string, Partial<ContainerStatus>>;
  init?: Record<string, Partial<ContainerStatus>>;
  extra?: (s: PodStatus) => void;
}

export function check(s: PodStatus, want: Want): void {
  assert.equal(s.phase, want.phase, 'phase');
  assert.equal(s.reason, want.reason, 'reason');
  assert.equal(s.message, want.message, 'message');
  if (want.conditions) assert.deepEqual(conditionsOf(s), want.conditions);
  for (const [name, fields] of Object.entries(want.containers ?? {})) {
    assert.deepEqual(pick(statusNamed(s.containerStatuses, name), Object.keys(fields)), fields, `container ${name}`);
  }
  for (const [name, fields] of Object.entries(want.init ?? {})) {
    assert.deepEqual(pick(statusNamed(s.initContainerStatuses, name), Object.keys(fields)), fields, `init container ${name}`);
  }
  want.extra?.(s);
  // What goes over the wire: no undefined left behind.
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
}

export const running = (startedAt: number) => ({ running: { startedAt: iso(startedAt) } });
export const waiting = (reason: string, message?: string) => ({ waiting: { reason, ...(message ? { message } : {}) } });
export const BACKOFF = 'back-off 40s restarting failed container=app pod=web_default(uid-1)';

export function cs(name: string, state: ContainerStatus['state'], extra: Partial<ContainerStatus> = {}): ContainerStatus {
  return { name, state, lastState: {}, ready: false, restartCount: 0, image: IMG, imageID: '', ...extra };
}
