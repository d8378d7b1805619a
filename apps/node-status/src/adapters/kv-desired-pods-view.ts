import type { Clock } from '@app/clock';
import type { PodRecord } from '@app/contracts';
import { hopStart, recordKvWatch } from '@app/tracing';
import { KvReflector, kvKey, type KvWatchEntry, type ReflectorKv } from '@app/nats';
import type { Logger } from '@app/observability';
import { DesiredPodsWatch } from '../ports.js';

const decoder = new TextDecoder();

export interface KvDesiredPodsViewDeps {
  /** The `pods` bucket, read only. */
  kv: ReflectorKv;
  node: string;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/**
 * The sync loop's `pods` bucket followed in memory (read only): one watch of
 * `<node>.pod.>` (KvReflector), its initial values read into a fresh map
 * that replaces the last one once complete, then each write applied as it
 * comes. A watch that dies is reported (onLost) and listed and watched again
 * after the back-off; onChange follows once the new one has its values.
 */
export class KvDesiredPodsView extends DesiredPodsWatch {
  private readonly prefix: string;

  constructor(private readonly deps: KvDesiredPodsViewDeps) {
    super();
    this.prefix = kvKey(deps.node, 'pod');
  }

  async watch(onChange: (pods: PodRecord[]) => void, onLost: () => void): Promise<() => void> {
    let pods = new Map<string, PodRecord>();
    let fresh: Map<string, PodRecord> | undefined;
    const apply = (map: Map<string, PodRecord>, e: KvWatchEntry): string => {
      const uid = e.key.slice(this.prefix.length + 1);
      if (e.operation !== 'PUT' || e.value.length === 0) map.delete(uid);
      else map.set(uid, JSON.parse(decoder.decode(e.value)) as PodRecord);
      return uid;
    };
    const reflector = new KvReflector({
      kv: this.deps.kv,
      key: `${this.prefix}.>`,
      bucket: 'pods',
      watcher: 'node-status desired pods',
      clock: this.deps.clock,
      logger: this.deps.logger,
      handler: {
        relisting: () => (fresh = new Map()),
        entry: (e, initial) => {
          if (initial) {
            apply(fresh ?? pods, e);
            return;
          }
          const started = hopStart();
          const uid = apply(pods, e);
          onChange([...pods.values()]);
          recordKvWatch(e, uid, started);
        },
        synced: () => {
          pods = fresh ?? pods;
          fresh = undefined;
          onChange([...pods.values()]);
        },
        lost: () => {
          fresh = undefined;
          onLost();
        },
      },
    });
    await reflector.start();
    return () => reflector.stop();
  }
}
