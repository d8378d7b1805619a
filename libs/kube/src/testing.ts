/**
 * Runtime status fixtures, for unit tests only (the lib's testing door:
 * `@app/kube/testing`): the sandboxes and container instances a
 * RuntimePodStatus is made of, as the CRI would report them. Each spec keeps
 * its own defaults (pod name, container ids, image, hash) and passes them in.
 */
import type { PodCacheGlobal } from '@app/contracts';
import type { PodSandboxStatus, StatusResponse } from '@app/cri';
import { NodeHealth } from './runtime-state.js';
import type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus } from './runtime-status.js';

export interface SandboxOpts {
  ready?: boolean;
  attempt?: number;
  /** The sandbox's network namespace: POD (its own, the default) or NODE (the host's). */
  netns?: 'POD' | 'NODE';
  /** The sandbox's IP; by default 10.88.77.2 in a POD namespace and none in a NODE one. */
  ip?: string;
  /** No network status at all (Network == nil upstream). */
  noNetwork?: boolean;
  /** The pod's name in the sandbox metadata ('p' unless given). */
  podName?: string;
  /** The CRI's creation time, nanoseconds as a string ('0' unless given). */
  createdAt?: string;
}

/** A PodSandboxStatus of pod default/<podName> (uid-1), ready unless told otherwise. */
export function sandboxStatus(id: string, o: SandboxOpts = {}): PodSandboxStatus {
  const netns = o.netns ?? 'POD';
  return {
    id,
    metadata: { name: o.podName ?? 'p', namespace: 'default', uid: 'uid-1', attempt: o.attempt ?? 0 },
    state: o.ready === false ? 'SANDBOX_NOTREADY' : 'SANDBOX_READY',
    createdAt: o.createdAt ?? '0',
    ...(o.noNetwork ? {} : { network: { ip: o.ip ?? (netns === 'NODE' ? '' : '10.88.77.2'), additionalIps: [] } }),
    linux: { namespaces: { options: { network: netns, pid: 'CONTAINER', ipc: 'POD', targetId: '' } } },
    labels: {},
    annotations: {},
    runtimeHandler: '',
  };
}

/** Creation times that only go up, so that a later instance is the newer one. */
let created = 1_000;

/**
 * One runtime container instance of container `name` in `state`: created
 * after every instance built before it, with the ID `<name>-<createdAt>`,
 * every other field zero or empty unless `extra` sets it.
 */
export function runtimeContainerStatus(name: string, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus {
  const createdAt = created++;
  return {
    id: `${name}-${createdAt}`,
    name,
    state,
    createdAt,
    startedAt: 0,
    finishedAt: 0,
    exitCode: 0,
    reason: '',
    message: '',
    image: '',
    imageRef: '',
    hash: '',
    restartCount: 0,
    ...extra,
  };
}

/** The RuntimePodStatus of pod default/p (uid-1), its containers newest first as the runtime lists them. */
export function runtimePodStatus(sandboxes: PodSandboxStatus[], containers: RuntimeContainerStatus[] = []): RuntimePodStatus {
  return {
    uid: 'uid-1',
    name: 'p',
    namespace: 'default',
    ips: [],
    sandboxStatuses: sandboxes,
    containerStatuses: [...containers].sort((a, b) => b.createdAt - a.createdAt),
    timestamp: 1,
  };
}

/** Answers what the test sets; `runtimeDown` makes Status reject. */
export class FakeNodeHealth extends NodeHealth {
  status: StatusResponse = { status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: true, reason: '', message: '' }] }, info: {}, runtimeHandlers: [] };
  runtimeDown = false;
  pleg?: PodCacheGlobal;
  runtimeStatus(): Promise<StatusResponse> {
    return this.runtimeDown ? Promise.reject(new Error('no cri-gateway answers')) : Promise.resolve(this.status);
  }
  plegRelist(): Promise<PodCacheGlobal | undefined> {
    return Promise.resolve(this.pleg);
  }
}
