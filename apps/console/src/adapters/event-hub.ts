import type { EventMessage } from '@app/contracts';

/** The events heard on NATS (console-reads.controller.ts), handed to the live feed's listeners. */
export class EventHub {
  private readonly listeners = new Set<(e: EventMessage) => void>();

  subscribe(listener: (e: EventMessage) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  publish(e: EventMessage): void {
    for (const l of this.listeners) l(e);
  }
}
