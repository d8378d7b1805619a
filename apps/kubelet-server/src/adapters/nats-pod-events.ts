import { Subjects, type EventMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { PodEvents } from '../ports.js';

/** PodEvents asked of the status manager: Subjects.podEvents. */
export class NatsPodEvents extends PodEvents {
  constructor(
    private readonly bus: Pick<NatsBus, 'request'>,
    private readonly node: string,
    private readonly timeoutMs = 5000,
  ) {
    super();
  }

  eventsOf(namespace: string, name: string): Promise<{ items: EventMessage[] }> {
    return this.bus.request<{ items: EventMessage[] }>(Subjects.podEvents.build(this.node), { namespace, name }, { timeoutMs: this.timeoutMs });
  }
}
