import type { PodManager } from '@app/pod-manager';
import { KnownPods } from '../ports.js';

/** KnownPods from the podManager's pods (@app/pod-manager; read only: the sync loop is their one writer). */
export class KvKnownPods extends KnownPods {
  constructor(private readonly pods: PodManager) {
    super();
  }

  async creationTimestamps(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const record of await this.pods.all()) {
      const created = record.pod.metadata.creationTimestamp;
      if (created) out.set(record.pod.metadata.uid ?? '', created);
    }
    return out;
  }
}
