/**
 * The kubelet's watch-based object manager (pkg/kubelet/util/manager
 * watch_based_manager.go, as configmap.NewWatchingConfigMapManager and
 * secret.NewWatchingSecretManager use it; the RuntimeClass manager's lister)
 * for config-source, which alone holds the node's credentials (ADR 0013):
 * pod-worker asks for an object by `kubelet.<node>.service.config-source.object`
 * (ADR 0014) and gets it from a watch of that one object.
 *
 *   get(ref) ─▶ no watch: start one (list + watch, fieldSelector metadata.name)
 *            ─▶ listed: answer from the watch's view (found, or not found)
 *            ─▶ not listed yet: wait for its first list (syncTimeoutMs), else
 *               Unavailable "failed to sync <resource> cache: <what failed>"
 *   sweep    ─▶ a watch nobody asked for in idleMs is stopped
 *
 * Upstream registers an object's watch when a pod referencing it is added
 * and drops it when the last such pod goes. Here a pod's worker asks for
 * each object its pod references at every sync (at least every
 * SYNC_FREQUENCY), so "nobody asked for idleMs" is "no pod references it
 * for a while", without config-source having to know which pods run.
 *
 * Invariants:
 *  - a change reaches the next request at once: the watch holds the object;
 *  - once listed, the last view is served while the apiserver is away (as a
 *    reflector's store is); an object never listed is an error that says why
 *    (403 from the Node authorizer, the apiserver unreachable), never "not found";
 *  - a watch that failed before its first list is started afresh by the next
 *    request, so a pod's retry is a fresh attempt rather than a wait on a
 *    back-off of up to 30 s;
 *  - an immutable configMap or secret is not watched once seen (upstream
 *    stops its reflector): it cannot change, and every watch costs the
 *    apiserver; it is served from what was seen until nobody asks for it;
 *  - no object's content is ever logged (secrets).
 */
import { Clock, type Timer } from '@app/clock';
import { MessageTypes, apiObjectResource, type ApiObjectReplyMessage } from '@app/contracts';
import type { Logger } from '@app/observability';
import type { ApiObject, ApiObjectRef, ApiObjectWatch } from './ports.js';

/** Why an object could not be answered: the reply's error code and description. */
export class ApiObjectError extends Error {
  constructor(
    readonly code: 'NotJoined' | 'Unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'ApiObjectError';
  }
}

export interface ObjectManagerOptions {
  /** How long a request waits for a new watch's first list (upstream polls 1 s; a fresh list against a remote apiserver takes longer). */
  syncTimeoutMs: number;
  /** A watch nobody asked for this long is stopped. */
  idleMs: number;
}

export const DEFAULT_OBJECT_MANAGER_OPTIONS: ObjectManagerOptions = { syncTimeoutMs: 5000, idleMs: 5 * 60_000 };

interface WatchedObject {
  ref: ApiObjectRef;
  stop: () => void;
  synced: boolean;
  object?: ApiObject;
  lastError?: string;
  lastUsed: number;
  /** Requests waiting for the next list or error. */
  waiters: Set<() => void>;
}

const keyOf = (ref: ApiObjectRef) => `${ref.kind}/${ref.namespace}/${ref.name}`;

/** The reply for an object as the watch holds it (undefined: it does not exist). */
export function objectReply(ref: ApiObjectRef, obj: ApiObject | undefined): ApiObjectReplyMessage {
  const base: ApiObjectReplyMessage = { type: MessageTypes.apiObject, kind: ref.kind, ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name, found: obj !== undefined };
  if (!obj) return base;
  switch (ref.kind) {
    case 'ConfigMap':
      return { ...base, data: obj.data ?? {}, binaryData: obj.binaryData ?? {} };
    case 'Secret':
      return { ...base, data: obj.data ?? {}, secretType: obj.type ?? 'Opaque' };
    case 'RuntimeClass':
      return { ...base, handler: obj.handler ?? '' };
  }
}

export class WatchBasedObjectManager {
  private readonly items = new Map<string, WatchedObject>();
  private sweepTimer?: Timer;
  private stopped = false;

  constructor(
    /** The apiserver's objects; null when the node has not joined a cluster (no KUBECONFIG). */
    private readonly watcher: ApiObjectWatch | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: ObjectManagerOptions = DEFAULT_OBJECT_MANAGER_OPTIONS,
  ) {}

  /** The objects watched now (`<kind>/<namespace>/<name>`). */
  get watched(): string[] {
    return [...this.items.keys()].sort();
  }

  start(): void {
    this.stopped = false;
    this.scheduleSweep();
  }

  stop(): void {
    this.stopped = true;
    this.sweepTimer?.cancel();
    for (const item of this.items.values()) this.drop(item);
    this.items.clear();
  }

  /** GetObject: the object from its watch; rejects with an ApiObjectError when it cannot say. */
  async get(ref: ApiObjectRef): Promise<ApiObjectReplyMessage> {
    const resource = apiObjectResource(ref.kind);
    if (!this.watcher) {
      throw new ApiObjectError('NotJoined', `this node has not joined a cluster (config-source has no KUBECONFIG): ${resource} "${ref.name}" cannot be read from an apiserver`);
    }
    const key = keyOf(ref);
    let item = this.items.get(key);
    if (item && !item.synced && item.lastError !== undefined) {
      // Failed before its first list: this request starts a fresh attempt.
      this.drop(item);
      this.items.delete(key);
      item = undefined;
    }
    item ??= this.add(this.watcher, ref);
    item.lastUsed = this.clock.now();
    if (!item.synced) await this.nextOutcome(item);
    if (!item.synced) throw new ApiObjectError('Unavailable', `failed to sync ${resource} cache: ${item.lastError ?? `no list of it within ${this.options.syncTimeoutMs} ms`}`);
    return objectReply(ref, item.object);
  }

  private add(watcher: ApiObjectWatch, ref: ApiObjectRef): WatchedObject {
    const item: WatchedObject = { ref, stop: () => undefined, synced: false, lastUsed: this.clock.now(), waiters: new Set() };
    this.items.set(keyOf(ref), item);
    this.logger.debug({ kind: ref.kind, namespace: ref.namespace, name: ref.name }, 'watching an object a pod references');
    item.stop = watcher.watch(
      ref,
      (objects) => {
        item.synced = true;
        item.lastError = undefined;
        item.object = objects.find((o) => o.metadata?.name === ref.name);
        if (item.object?.immutable === true) {
          item.stop();
          this.logger.debug({ kind: ref.kind, namespace: ref.namespace, name: ref.name }, 'stopped watching for changes: the object is immutable');
        }
        this.wake(item);
      },
      (err) => {
        item.lastError = err.message;
        this.wake(item);
      },
    );
    return item;
  }

  private drop(item: WatchedObject): void {
    item.stop();
    this.wake(item);
  }

  private wake(item: WatchedObject): void {
    for (const w of [...item.waiters]) w();
  }

  /** Resolves at the watch's next list or error, or after syncTimeoutMs. */
  private nextOutcome(item: WatchedObject): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        timer.cancel();
        item.waiters.delete(done);
        resolve();
      };
      const timer = this.clock.setTimer(this.options.syncTimeoutMs, done);
      item.waiters.add(done);
    });
  }

  private scheduleSweep(): void {
    if (this.stopped) return;
    this.sweepTimer = this.clock.setTimer(Math.min(this.options.idleMs, 60_000), () => {
      this.sweep();
      this.scheduleSweep();
    });
  }

  /** Stops the watches nobody asked for in idleMs. */
  sweep(): void {
    const now = this.clock.now();
    for (const [key, item] of this.items) {
      if (now - item.lastUsed < this.options.idleMs) continue;
      this.drop(item);
      this.items.delete(key);
      this.logger.debug({ kind: item.ref.kind, namespace: item.ref.namespace, name: item.ref.name }, 'no pod asked for the object for a while; its watch is stopped');
    }
  }
}
