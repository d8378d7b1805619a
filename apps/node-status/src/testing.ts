/**
 * Fakes of the node ports, for unit tests: an apiserver holding Nodes and
 * Leases in memory (with resourceVersions, 409 on a stale update, and
 * scripted failures), a machine that says what the test sets, and the
 * runtime's version.
 */
import { ApiError } from '@app/apiserver';
import type { Lease, Node, NodePressureRecord, Pod } from '@app/contracts';
import { LeaseApi, Machine, MirrorPodApi, NodeApi, NodePressureView, RuntimeVersion, type MachineInfo } from './ports.js';

/** Applies a JSON merge patch (RFC 7386) to a copy of `target`. */
export function applyMergePatch<T>(target: T, patch: unknown): T {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch) as T;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out as T;
}

/** Nodes and Leases in memory; `fail` rejects the next calls of a kind with the given errors. */
export class FakeKubeApi {
  readonly nodes = new Map<string, Node>();
  readonly leases = new Map<string, Lease>();
  /** Pods by namespace/name. */
  readonly pods = new Map<string, Pod>();
  readonly calls: string[] = [];
  readonly patches: object[] = [];
  /** Errors the next calls of each kind reject with, in order. */
  readonly fail: Record<string, ApiError[]> = {};
  private rv = 1;
  private uid = 1;

  /** Whether the next call of `kind` fails (and takes its error). */
  private failing(kind: string): void {
    this.calls.push(kind);
    const err = this.fail[kind]?.shift();
    if (err) throw err;
  }

  readonly nodeApi = ((api: FakeKubeApi) =>
    new (class extends NodeApi {
      getNode(name: string): Promise<Node | undefined> {
        return api.run('getNode', () => (api.nodes.has(name) ? structuredClone(api.nodes.get(name)) : undefined));
      }
      createNode(node: Node): Promise<Node> {
        return api.run('createNode', () => {
          const name = node.metadata.name ?? '';
          if (api.nodes.has(name)) throw new ApiError(409, 'AlreadyExists', `nodes "${name}" already exists`);
          const stored = { ...structuredClone(node), metadata: { ...node.metadata, uid: `node-uid-${api.uid++}`, resourceVersion: String(api.rv++) } };
          api.nodes.set(name, stored);
          return structuredClone(stored);
        });
      }
      patchNodeStatus(name: string, patch: object): Promise<Node> {
        return api.run('patchNodeStatus', () => {
          const node = api.nodes.get(name);
          if (!node) throw new ApiError(404, 'NotFound', `nodes "${name}" not found`);
          api.patches.push(patch);
          const { spec: _spec, ...allowed } = patch as Record<string, unknown>;
          const patched = applyMergePatch(node, allowed);
          const stored: Node = { ...patched, metadata: { ...patched.metadata, resourceVersion: String(api.rv++) } };
          api.nodes.set(name, stored);
          return structuredClone(stored);
        });
      }
    })())(this);

  readonly leaseApi = ((api: FakeKubeApi) =>
    new (class extends LeaseApi {
      get(namespace: string, name: string): Promise<Lease | undefined> {
        return api.run('getLease', () => structuredClone(api.leases.get(`${namespace}/${name}`)));
      }
      create(lease: Lease): Promise<Lease> {
        return api.run('createLease', () => {
          const key = `${lease.metadata?.namespace ?? ''}/${lease.metadata?.name ?? ''}`;
          if (api.leases.has(key)) throw new ApiError(409, 'AlreadyExists', `leases "${key}" already exists`);
          const stored = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(api.rv++) } };
          api.leases.set(key, stored);
          return structuredClone(stored);
        });
      }
      update(lease: Lease): Promise<Lease> {
        return api.run('updateLease', () => {
          const key = `${lease.metadata?.namespace ?? ''}/${lease.metadata?.name ?? ''}`;
          const current = api.leases.get(key);
          if (!current) throw new ApiError(404, 'NotFound', `leases "${key}" not found`);
          if (current.metadata?.resourceVersion !== lease.metadata?.resourceVersion) throw new ApiError(409, 'Conflict', 'the object has been modified');
          const stored = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(api.rv++) } };
          api.leases.set(key, stored);
          return structuredClone(stored);
        });
      }
    })())(this);

  readonly mirrorPodApi = ((api: FakeKubeApi) =>
    new (class extends MirrorPodApi {
      createMirrorPod(pod: Pod): Promise<Pod> {
        return api.run('createMirrorPod', () => {
          const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
          if (api.pods.has(key)) throw new ApiError(409, 'AlreadyExists', `pods "${key}" already exists`);
          const stored: Pod = { ...structuredClone(pod), metadata: { ...pod.metadata, uid: `pod-uid-${api.uid++}`, resourceVersion: String(api.rv++) } };
          api.pods.set(key, stored);
          return structuredClone(stored);
        });
      }
      deleteMirrorPod(namespace: string, name: string, uid: string): Promise<boolean> {
        return api.run(`deleteMirrorPod ${namespace}/${name}`, () => {
          const p = api.pods.get(`${namespace}/${name}`);
          if (!p || p.metadata.uid !== uid) return false;
          api.pods.delete(`${namespace}/${name}`);
          return true;
        });
      }
    })())(this);

  run<T>(kind: string, fn: () => T): Promise<T> {
    try {
      this.failing(kind);
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Someone else changes the lease (a conflict for the holder's next update). */
  touchLease(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const l = this.leases.get(key);
    if (l) this.leases.set(key, { ...l, metadata: { ...l.metadata, resourceVersion: String(this.rv++) } });
  }
}

/** The eviction manager's record, as the test sets it (undefined: none written yet). */
export class FakeNodePressure extends NodePressureView {
  record: NodePressureRecord | undefined;
  fail = false;
  read(): Promise<NodePressureRecord | undefined> {
    return this.fail ? Promise.reject(new Error('KV away')) : Promise.resolve(this.record && structuredClone(this.record));
  }
}
FakeNodePressure satisfies new () => NodePressureView;

/** A machine that says what the test sets. */
export class FakeMachine extends Machine {
  machine: MachineInfo = {
    machineID: 'mid',
    systemUUID: 'uuid',
    bootID: 'boot',
    kernelVersion: '6.1.0',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    hugePages: {},
    nodeFsCapacityBytes: 100 * 2 ** 30,
  };
  info(): Promise<MachineInfo> {
    return Promise.resolve(structuredClone(this.machine));
  }
}

export class FakeRuntimeVersion extends RuntimeVersion {
  version = 'containerd://1.6.20';
  containerRuntimeVersion(): Promise<string> {
    return Promise.resolve(this.version);
  }
}
