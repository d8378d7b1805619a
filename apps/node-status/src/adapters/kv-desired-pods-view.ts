import type { PodRecord } from '@app/contracts';
import { hopStart, recordKvWatch } from '@app/tracing';
import { kvKey, type KV, type KvWatchEntry } from '@app/nats';
import { KvPodManager } from '@app/pod-manager';
import { DesiredPodsWatch } from '../ports.js';

const decoder = new TextDecoder();

/**
 * The sync loop's `pods` bucket followed in memory (read only): a watch of
 * `<node>.pod.>` for the updates, started before the one full read, whose
 * updates that came meanwhile are applied after it in order (each carries
 * its key's whole value, so the last one applied is the latest). After that
 * each update is applied as it comes; no listing of the bucket again.
 */
export class KvDesiredPodsView extends DesiredPodsWatch {
  private readonly prefix: string;

  constructor(
    private readonly kv: Pick<KV, 'watch' | 'get' | 'put' | 'delete' | 'keys'>,
    private readonly node: string,
  ) {
    super();
    this.prefix = kvKey(node, 'pod');
  }

  async watch(onChange: (pods: PodRecord[]) => void, onLost: () => void): Promise<() => void> {
    const pods = new Map<string, PodRecord>();
    const early: KvWatchEntry[] = [];
    let loaded = false;
    const apply = (e: KvWatchEntry) => {
      const uid = e.key.slice(this.prefix.length + 1);
      if (e.operation !== 'PUT' || e.value.length === 0) pods.delete(uid);
      else pods.set(uid, JSON.parse(decoder.decode(e.value)) as PodRecord);
    };
    let stopped = false;
    const iter = await this.kv.watch({ key: `${this.prefix}.>`, include: 'updates' });
    const stop = () => {
      stopped = true;
      iter.stop();
    };
    void (async () => {
      try {
        for await (const e of iter) {
          if (!loaded) {
            early.push(e);
            continue;
          }
          const started = hopStart();
          apply(e);
          onChange([...pods.values()]);
          recordKvWatch(e, e.key.slice(this.prefix.length + 1), started);
        }
      } catch {
        // ended below
      }
      // The watch ended without being stopped: what it says is no longer followed.
      if (!stopped) onLost();
    })();
    try {
      for (const record of await new KvPodManager(this.kv, this.node).all()) pods.set(record.pod.metadata.uid ?? '', record);
    } catch (err) {
      stop();
      throw err;
    }
    for (const e of early.splice(0)) apply(e);
    loaded = true;
    onChange([...pods.values()]);
    return stop;
  }
}
