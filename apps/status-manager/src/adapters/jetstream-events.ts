import { MessageTypes, decodeMessage, type EventMessage } from '@app/contracts';
import { JetStreamEventConsumer, publishEventDurably, type NatsConnection } from '@app/nats';
import type { Logger } from '@app/observability';
import { DurableEvents } from '../api-ports.js';

/** DurableEvents over KUBELET_EVENTS and the node's durable consumer (libs/nats event-stream.ts). */
export class JetStreamEvents extends DurableEvents {
  private consumer?: JetStreamEventConsumer;

  constructor(
    private readonly nc: NatsConnection,
    private readonly node: string,
    private readonly logger: Logger,
  ) {
    super();
  }

  async consume(handle: (event: EventMessage, seq: number, working: () => void) => Promise<'done' | 'again'>): Promise<void> {
    this.consumer?.stop();
    const consumer = new JetStreamEventConsumer(this.nc, this.node, (d) => decodeMessage(MessageTypes.event, d));
    this.consumer = consumer;
    await consumer.run(
      (d) => handle(d.event, d.seq, () => d.working()),
      (err) => this.logger.warn({ err: err.message }, 'dropped a malformed event from KUBELET_EVENTS'),
    );
  }

  stop(): void {
    this.consumer?.stop();
    this.consumer = undefined;
  }

  publish(event: EventMessage, msgId: string): Promise<void> {
    return publishEventDurably(this.nc, this.node, event, msgId);
  }
}
