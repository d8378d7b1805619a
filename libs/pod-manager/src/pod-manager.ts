/**
 * The podManager (upstream pkg/kubelet/pod/pod_manager.go): the pods the
 * node should run, by UID. Here it is the `pods` KV bucket, whose only
 * writer is the sync loop (its admission and its config handling); every
 * other subsystem reads it through this lib:
 *
 *   key       `<node>.pod.<uid>` (podManagerKey), a PodRecord of JSON: the
 *             pod as the config source gave it, its rejection if admission
 *             refused it, and when it was added
 *   reader    PodManager: every pod, or one by UID, read from the bucket now
 *             (KvPodManager), for a decision that must not act on an older
 *             value than the one at the call
 *   mirror    podManagerMirror: the same keys kept in memory by one watch
 *             (docs/adr/0019-kv-mirrors.md), for the periodic passes and
 *             the read paths that run many times a second
 *   writer    podManagerStore: the records as a JSON store, for the sync
 *             loop (its one writer: AddPod, UpdatePod, RemovePod)
 *   fake      FakePodManager (@app/pod-manager/testing)
 */
import type { PodRecord } from '@app/contracts';
import { JsonKvStore, type JsonKv, type KvMirror, type KvMirrorOptions } from '@app/nats';

/** The key of a pod's record in the `pods` bucket. */
export function podManagerKey(node: string, uid: string): string {
  return `${node}.pod.${uid}`;
}

/** The node's records in the `pods` bucket as a JSON store, by UID: the sync loop's, to write them; readers use PodManager. */
export function podManagerStore(kv: JsonKv, node: string): JsonKvStore<PodRecord> {
  return new JsonKvStore<PodRecord>(kv, node, 'pod');
}

/** GetPods / GetPodByUID: the narrow port most readers need. */
export abstract class PodManager {
  /** Every desired pod of the node, admitted or rejected. */
  abstract all(): Promise<PodRecord[]>;
  /** One pod by UID; undefined when the node does not (or no longer) want it. */
  abstract get(uid: string): Promise<PodRecord | undefined>;
}

/** The podManager's records in the `pods` bucket, read now (read only). */
export class KvPodManager extends PodManager {
  private readonly pods: JsonKvStore<PodRecord>;

  constructor(kv: JsonKv, node: string) {
    super();
    this.pods = podManagerStore(kv, node);
  }

  all(): Promise<PodRecord[]> {
    return this.pods.values();
  }

  get(uid: string): Promise<PodRecord | undefined> {
    return this.pods.get(uid);
  }
}

/** The `pods` bucket's records of a node followed in memory (start() it before reading). */
export function podManagerMirror(kv: JsonKv, node: string, options: Omit<KvMirrorOptions, 'bucket'>): KvMirror<PodRecord> {
  return podManagerStore(kv, node).mirror({ ...options, bucket: 'pods' });
}
