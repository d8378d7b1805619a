/** What the PLEG depends on: where the cache goes, where events go, its metrics, the relay's state. The adapters are in adapters/. */
import type { ContainerEventsStatusMessage, PodCacheEntry, PodCacheGlobal, PodLifecycleEventMessage } from '@app/contracts';

/** The `pod-cache` bucket; the PLEG is its only writer. */
export abstract class PodCacheStore {
  abstract load(): Promise<{ entries: PodCacheEntry[]; global: number }>;
  abstract set(entry: PodCacheEntry): Promise<void>;
  abstract delete(uid: string): Promise<void>;
  /** Writes `<node>.global`: the cache's clock (a successful relist's time), its thresholds and the PLEG's sign of life (the sync loop's gate reads them all). */
  abstract updateGlobal(global: PodCacheGlobal): Promise<void>;
}

/** plegCh: `kubelet.<node>.pleg.<uid>`. */
export abstract class PlegEventSink {
  /** Returns false when the event could not be sent (counted as discarded). */
  abstract publish(event: PodLifecycleEventMessage): boolean;
}

/** kubelet_pleg_* metrics. */
export abstract class PlegMetrics {
  abstract relisted(durationSeconds: number, intervalSeconds: number | undefined, at: number): void;
  abstract discarded(count: number): void;
}

/**
 * Where the evented PLEG tells how its container events are doing: the
 * kubelet's kubelet_evented_pleg_connection_* metrics, and an event on the
 * Node at each fallback and each return.
 */
export abstract class PlegModeReporter {
  /** Events are used: at the start of evented mode (`resumed` false), or again after a fallback (`resumed` true). */
  abstract connected(resumed: boolean): void;
  /** Evented mode fell back to the 1s relist, for `reason`; `fault` when events failed (not when the runtime offers none). */
  abstract fellBack(reason: string, fault: boolean): void;
  /** Seconds from the runtime making an event to the PLEG receiving it. */
  abstract latency(seconds: number): void;
}

/** cri-gateway's container event relay, asked how it is doing; undefined when it does not answer. */
export abstract class RelayStatus {
  abstract ask(): Promise<ContainerEventsStatusMessage | undefined>;
}

/** The host's files a container's status points at: its termination message file and its CRI log. */
export abstract class ContainerFileReader {
  /** At most the last `maxBytes` of the file (truncated: it was longer); undefined when it does not exist. */
  abstract readTail(path: string, maxBytes: number): Promise<{ text: string; truncated: boolean } | undefined>;
}
