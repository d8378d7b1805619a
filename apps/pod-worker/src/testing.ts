/** Hand-written fakes of the pod worker's ports (ports.ts), for unit tests only. */
import type { PodRecord } from '@app/contracts';
import { DesiredPods, WorkSubscriptions } from './ports.js';

/** The podManager in memory. */
export class MemoryDesiredPods extends DesiredPods {
  readonly pods = new Map<string, PodRecord>();
  all(): Promise<Map<string, PodRecord>> {
    return Promise.resolve(new Map(this.pods));
  }
}

/** Work subjects in memory: `deliver` sends a message to a followed shard. */
export class FakeWorkSubscriptions extends WorkSubscriptions {
  private readonly handlers = new Map<number, (subject: string, data: Uint8Array) => void>();

  follow(shard: number, onMessage: (subject: string, data: Uint8Array) => void): () => void {
    this.handlers.set(shard, onMessage);
    return () => this.handlers.delete(shard);
  }

  /** The shards followed now. */
  get followed(): number[] {
    return [...this.handlers.keys()].sort((a, b) => a - b);
  }

  /** Delivers `body` (JSON-encoded unless a string) on the shard's work subject; false when nobody follows it. */
  deliver(shard: number, body: unknown): boolean {
    const handler = this.handlers.get(shard);
    if (!handler) return false;
    handler(`kubelet.node-a.work.${shard}.x`, new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)));
    return true;
  }
}
