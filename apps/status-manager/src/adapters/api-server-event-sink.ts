import { ApiServer, PatchType } from '@app/apiserver';
import type { Event } from '@app/contracts';
import type { LeaderFence } from '@app/leader-election';
import { EventSink } from '../api-ports.js';

const eventsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;

/** EventSink over the apiserver's core/v1 Events; writes fenced to the leader. */
export class ApiServerEventSink extends EventSink {
  constructor(
    private readonly api: Pick<ApiServer, 'request'>,
    private readonly fence: LeaderFence,
  ) {
    super();
  }

  async create(event: Event): Promise<Event> {
    this.fence.check('post an event to the apiserver');
    const { resourceVersion: _rv, ...metadata } = event.metadata;
    return this.api.request<Event>(eventsPath(event.metadata.namespace ?? 'default'), { method: 'POST', body: { ...event, metadata } });
  }

  async patch(event: Event, patch: Record<string, unknown>): Promise<Event> {
    this.fence.check('update an event in the apiserver');
    return this.api.request<Event>(`${eventsPath(event.metadata.namespace ?? 'default')}/${encodeURIComponent(event.metadata.name ?? '')}`, { method: 'PATCH', body: patch, contentType: PatchType.strategicMerge });
  }
}
