import { PatchType, isConflict, isNotFound, type ApiServer } from '@app/apiserver';
import type { Lease, Node, Pod } from '@app/contracts';
import type { LeaderFence } from '@app/leader-election';
import { LeaseApi, MirrorPodApi, NodeApi } from '../ports.js';

/** core/v1 nodes and nodes/status on the apiserver; every write checks the leader fence first. */
export class ApiNodeClient extends NodeApi {
  constructor(
    private readonly api: ApiServer,
    private readonly fence: LeaderFence,
  ) {
    super();
  }

  async getNode(name: string): Promise<Node | undefined> {
    try {
      return await this.api.request<Node>(`/api/v1/nodes/${encodeURIComponent(name)}`);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  createNode(node: Node): Promise<Node> {
    this.fence.check('create the Node');
    return this.api.request<Node>('/api/v1/nodes', { method: 'POST', body: node });
  }

  patchNodeStatus(name: string, patch: object): Promise<Node> {
    this.fence.check('patch the Node status');
    return this.api.request<Node>(`/api/v1/nodes/${encodeURIComponent(name)}/status`, { method: 'PATCH', body: patch, contentType: PatchType.merge });
  }
}

/** coordination.k8s.io/v1 leases on the apiserver; every write checks the leader fence first. */
export class ApiLeaseClient extends LeaseApi {
  constructor(
    private readonly api: ApiServer,
    private readonly fence: LeaderFence,
  ) {
    super();
  }

  private path(namespace: string, name?: string): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
  }

  async get(namespace: string, name: string): Promise<Lease | undefined> {
    try {
      return await this.api.request<Lease>(this.path(namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  create(lease: Lease): Promise<Lease> {
    this.fence.check('create the node lease');
    return this.api.request<Lease>(this.path(lease.metadata?.namespace ?? ''), { method: 'POST', body: lease });
  }

  update(lease: Lease): Promise<Lease> {
    this.fence.check('renew the node lease');
    return this.api.request<Lease>(this.path(lease.metadata?.namespace ?? '', lease.metadata?.name ?? ''), { method: 'PUT', body: lease });
  }
}

/** Mirror pods on the apiserver (mirror_client.go); every write checks the leader fence first. */
export class ApiMirrorPodClient extends MirrorPodApi {
  constructor(
    private readonly api: ApiServer,
    private readonly fence: LeaderFence,
  ) {
    super();
  }

  createMirrorPod(pod: Pod): Promise<Pod> {
    this.fence.check('create a mirror pod');
    return this.api.request<Pod>(`/api/v1/namespaces/${encodeURIComponent(pod.metadata.namespace ?? 'default')}/pods`, { method: 'POST', body: pod });
  }

  async deleteMirrorPod(namespace: string, name: string, uid: string): Promise<boolean> {
    this.fence.check('delete a mirror pod');
    try {
      await this.api.request(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`, {
        method: 'DELETE',
        body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } },
      });
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
  }
}
