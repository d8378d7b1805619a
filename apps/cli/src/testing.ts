/**
 * Pods in every state, for the printers' specs (a T0 clock, containers running, waiting, terminated); and the
 * recorded answers of a real nats-server the topology and trace specs read (apps/cli/testdata, testdata()).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContainerStatus, Pod, PodCondition, PodSpec, PodStatus } from '@app/contracts';

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
