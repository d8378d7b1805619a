import { ApiServer, PatchType, isConflict, isNotFound } from '@app/apiserver';
import type { Pod } from '@app/contracts';
import type { LeaderFence } from '@app/leader-election';
import { PodStatusApi } from '../api-ports.js';

const podPath = (namespace: string, name: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

/** PodStatusApi over the apiserver: the `status` subresource and deletes; writes fenced to the leader. */
export class ApiServerPodStatus extends PodStatusApi {
  constructor(
    private readonly api: Pick<ApiServer, 'request'>,
    private readonly fence: LeaderFence,
  ) {
    super();
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    try {
      return await this.api.request<Pod>(podPath(namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async patchPodStatus(namespace: string, name: string, patch: Record<string, unknown>): Promise<Pod> {
    this.fence.check('patch a pod status in the apiserver');
    return this.api.request<Pod>(`${podPath(namespace, name)}/status`, { method: 'PATCH', body: patch, contentType: PatchType.strategicMerge });
  }

  async deletePod(namespace: string, name: string, uid: string): Promise<void> {
    this.fence.check('delete a pod in the apiserver');
    try {
      await this.api.request(podPath(namespace, name), { method: 'DELETE', body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } } });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}
