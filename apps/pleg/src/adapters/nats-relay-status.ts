import { Subjects, type ContainerEventsStatusMessage } from '@app/contracts';
import type { NatsBus } from '@app/nats';
import { RelayStatus } from '../ports.js';

/** `kubelet.<node>.service.cri-gateway.events`, request/reply. */
export class NatsRelayStatus extends RelayStatus {
  constructor(
    private readonly bus: NatsBus,
    private readonly node: string,
  ) {
    super();
  }
  ask(): Promise<ContainerEventsStatusMessage | undefined> {
    return this.bus.request<ContainerEventsStatusMessage>(Subjects.criEventsStatus.build(this.node), {}, { timeoutMs: 5000 }).catch(() => undefined);
  }
}
