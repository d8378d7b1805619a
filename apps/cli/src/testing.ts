/**
 * Pods in every state, for the printers' specs (a T0 clock, containers running, waiting, terminated); and the
 * recorded answers of a real nats-server the topology and trace specs read (apps/cli/testdata, testdata()).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TraceRecord } from '@app/tracing';
import { DomainUnreachableError, FleetReader } from './fleet-commands.js';
import { contractClaim, type ContainerStatus, type Pod, type PodCondition, type PodSpec, type PodStatus, type ServiceInfo } from '@app/contracts';

/** apps/cli/testdata, from the source tree or from tsc's output under dist/. */
const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), fileURLToPath(import.meta.url).includes('/dist/') ? '../../../../apps/cli/testdata' : '../testdata');

/** A recorded answer in apps/cli/testdata (its README says where each comes from), parsed. */
export function testdata<T>(file: string): T {
  return JSON.parse(readFileSync(join(TESTDATA, file), 'utf8')) as T;
}

export const S = 1000;
export const MIN = 60 * S;
export const H = 60 * MIN;
export const D = 24 * H;
export const T0 = 1_700_000_000_000; // Tue, 14 Nov 2023 22:13:20 UTC
export const at = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

export const running = (name: string, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  state: { running: { startedAt: at(T0) } },
  ready: true,
  restartCount: 0,
  image: 'localhost/kubelet-split/busybox:1.35',
  imageID: 'sha256:b',
  containerID: `containerd://${name}-id`,
  started: true,
  ...o,
});
export const waiting = (name: string, reason?: string, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  ...running(name),
  state: { waiting: reason ? { reason } : {} },
  ready: false,
  started: false,
  ...o,
});
export const terminated = (name: string, exitCode: number, reason?: string, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  ...running(name),
  state: { terminated: { exitCode, ...(reason ? { reason } : {}), startedAt: at(T0), finishedAt: at(T0 + S) } },
  ready: false,
  started: false,
  ...o,
});
export const cond = (type: string, status: PodCondition['status'], reason?: string): PodCondition => ({ type, status, ...(reason ? { reason } : {}) });

export function pod(o: { spec?: Partial<PodSpec>; status?: PodStatus; deletionTimestamp?: string; name?: string; created?: number } = {}): Pod {
  return {
    metadata: {
      name: o.name ?? 'web-node1',
      namespace: 'default',
      uid: 'uid-1',
      creationTimestamp: at(o.created ?? T0),
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: { containers: [{ name: 'app', image: 'localhost/kubelet-split/busybox:1.35' }], restartPolicy: 'Always', nodeName: 'node1', ...o.spec },
    ...(o.status ? { status: o.status } : {}),
  };
}

export const initSpec = (...names: string[]): Partial<PodSpec> => ({ initContainers: names.map((name) => ({ name, image: 'busybox' })) });
export const sidecarSpec: Partial<PodSpec> = { initContainers: [{ name: 'side', image: 'busybox', restartPolicy: 'Always' }] };

/** A pod on `node` with its own UID, for the fleet specs. */
export const onNode = (node: string, name: string, uid: string, namespace = 'default'): Pod => {
  const p = pod({ name, spec: { nodeName: node } });
  return { ...p, metadata: { ...p.metadata, uid, namespace } };
};

/** A service instance's ServiceInfo, for the fleet specs. */
export const info = (node: string, service: string, o: Partial<ServiceInfo> = {}): ServiceInfo => ({
  type: 'kubelet.v1.service_info',
  service,
  node,
  instance: 'i0',
  version: '0.30.0',
  connectionName: `${service}@${node}#i0`,
  pid: 1,
  startedAt: '2026-12-02T00:00:00Z',
  httpPort: 10315,
  subjects: [],
  contract: { ...contractClaim(), peersOutsidePolicy: [] },
  ...o,
});

/** A hub server's LEAFZ reply, as nats-server 2.14 sends it asked with `{"subscriptions": true}`. */
export const leafz = (server: string, leafs: { name: string; domain?: string }[]) => ({
  server: { name: server, cluster: 'ks-hub', domain: 'hub' },
  data: {
    leafnodes: leafs.length,
    leafs: leafs.map((l, i) => ({
      id: 18 + i,
      name: l.name,
      is_spoke: false,
      account: 'KUBELET',
      ip: '127.0.0.1',
      port: 40000 + i,
      rtt: '410µs',
      in_msgs: 3,
      out_msgs: 5,
      subscriptions: 10,
      subscriptions_list: l.domain ? [`$LDS.9DJ9zS2r2P67gRr2s4y6WJ`, `$JS.${l.domain}.API.INFO`, `$JS.${l.domain}.API.STREAM.>`] : ['$LDS.x'],
    })),
  },
});

/** The FleetReader port, answering as told and recording what was asked; a node in `unreachable` fails as its domain would. */
export class FakeFleetReader extends FleetReader {
  readonly where = 'nats://hub-0:4222';
  readonly asked: string[] = [];
  leafzReplies: unknown[] = [];
  /** Each node's status manager's replies. */
  podReplies = new Map<string, unknown[]>();
  /** Each node's service instances' ServiceInfo replies. */
  infoReplies = new Map<string, unknown[]>();
  /** The records each node's domain holds, by `<node> <uid>`. */
  records = new Map<string, TraceRecord[]>();
  unreachable = new Set<string>();

  leafLinks(): Promise<unknown[]> {
    this.asked.push('leafz');
    return Promise.resolve(this.leafzReplies);
  }

  podLists(node: string): Promise<unknown[]> {
    this.asked.push(`pods ${node}`);
    return Promise.resolve(this.podReplies.get(node) ?? []);
  }

  serviceInfos(node: string, services: readonly string[]): Promise<unknown[]> {
    this.asked.push(`info ${node} (${services.length} services)`);
    return Promise.resolve(this.infoReplies.get(node) ?? []);
  }

  podTrace(uid: string, node: string): Promise<{ records: TraceRecord[]; rejected: number }> {
    this.asked.push(`trace ${node} ${uid}`);
    if (this.unreachable.has(node)) return Promise.reject(new DomainUnreachableError(node, node, 'no responders'));
    return Promise.resolve({ records: this.records.get(`${node} ${uid}`) ?? [], rejected: 0 });
  }
}

/** A trace record of `service` on `node` for pod `uid`. */
export const traceRecord = (node: string, service: string, uid: string, at: number, o: Partial<TraceRecord> = {}): TraceRecord => ({
  type: 'kubelet.v1.trace_hop',
  traceId: 't1',
  spanId: `s${at}`,
  kind: 'handle',
  podUid: uid,
  instance: `${service}@${node}#i0`,
  at,
  durationMs: 1.5,
  subject: `kubelet.${node}.work.0.${uid}`,
  ...o,
});
