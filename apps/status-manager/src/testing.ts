/**
 * Test doubles of the status manager's ports (unit tests only): each
 * records its calls and can be told to fail, and is checked against its
 * port at compile time.
 */
import { ApiError, POD_STATUS_MERGE_KEYS, applyStrategicMergePatch } from '@app/apiserver';
import type { Event, Pod, PodRecord, PodSyncStatusRecord } from '@app/contracts';
import { ApiPods, EventSink, PodStatusApi, PodWorkerRecords } from './api-ports.js';
import { DesiredPods, PodResync } from './ports.js';
import type { StatusEntry } from './pod-status-versions.js';

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

/** ApiPods the test sets: `set` hands the listeners the new set, as a watch event would. */
export class FakeApiPods extends ApiPods {
  synced = true;
  private pods = new Map<string, Pod>();
  private readonly listeners = new Set<(pods: readonly Pod[]) => void>();

  get hasSynced(): boolean {
    return this.synced;
  }
  all(): Pod[] {
    return [...this.pods.values()].map((p) => structuredClone(p));
  }
  get(namespace: string, name: string): Pod | undefined {
    const p = this.pods.get(keyOf(namespace, name));
    return p && structuredClone(p);
  }
  byUid(uid: string): Pod | undefined {
    const p = [...this.pods.values()].find((x) => x.metadata.uid === uid);
    return p && structuredClone(p);
  }
  subscribe(listener: (pods: readonly Pod[]) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  get subscribers(): number {
    return this.listeners.size;
  }
  set(pods: readonly Pod[]): void {
    this.pods = new Map(pods.map((p) => [keyOf(p.metadata.namespace ?? '', p.metadata.name ?? ''), structuredClone(p)]));
    const all = this.all();
    for (const l of this.listeners) l(all);
  }
}
FakeApiPods satisfies new () => ApiPods;

export interface PodApiCall {
  verb: 'get' | 'patch' | 'delete';
  pod: string;
  patch?: Record<string, unknown>;
  uid?: string;
}

/**
 * An apiserver's pods in memory: GET, the status PATCH (the metadata.uid
 * precondition checked, the patch applied as the apiserver would) and
 * DELETE (grace 0, its UID precondition). Every change is shown to `watch`
 * (a FakeApiPods), as the reflector would see it. `failures` are thrown,
 * one per call, before anything else.
 */
export class FakePodStatusApi extends PodStatusApi {
  readonly pods = new Map<string, Pod>();
  readonly calls: PodApiCall[] = [];
  readonly failures: Error[] = [];
  /** When set, a GET waits for it (to hold a sync in the middle). */
  holdGet?: Promise<void>;
  private rv = 1;

  constructor(private readonly watch?: FakeApiPods) {
    super();
  }

  put(pod: Pod): void {
    this.pods.set(keyOf(pod.metadata.namespace ?? '', pod.metadata.name ?? ''), { ...structuredClone(pod), metadata: { ...structuredClone(pod.metadata), resourceVersion: String(this.rv++) } });
    this.show();
  }
  pod(namespace: string, name: string): Pod | undefined {
    return this.pods.get(keyOf(namespace, name));
  }
  verbs(): string[] {
    return this.calls.map((c) => `${c.verb} ${c.pod}`);
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    this.calls.push({ verb: 'get', pod: keyOf(namespace, name) });
    this.fail();
    if (this.holdGet) await this.holdGet;
    const p = this.pod(namespace, name);
    return p && structuredClone(p);
  }

  patchPodStatus(namespace: string, name: string, patch: Record<string, unknown>): Promise<Pod> {
    this.calls.push({ verb: 'patch', pod: keyOf(namespace, name), patch: structuredClone(patch) });
    this.fail();
    const p = this.pod(namespace, name);
    if (!p) return Promise.reject(new ApiError(404, 'NotFound', `pods "${name}" not found`));
    const uid = (patch['metadata'] as { uid?: string } | undefined)?.uid;
    if (uid !== undefined && uid !== p.metadata.uid) return Promise.reject(new ApiError(409, 'Conflict', `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${p.metadata.uid ?? ''}`));
    const patched = applyStrategicMergePatch({ status: p.status ?? {} }, { status: patch['status'] ?? {} }, POD_STATUS_MERGE_KEYS);
    this.put({ ...p, status: patched.status });
    return Promise.resolve(structuredClone(this.pod(namespace, name) as Pod));
  }

  deletePod(namespace: string, name: string, uid: string): Promise<void> {
    this.calls.push({ verb: 'delete', pod: keyOf(namespace, name), uid });
    this.fail();
    const p = this.pod(namespace, name);
    if (p?.metadata.uid === uid) {
      this.pods.delete(keyOf(namespace, name));
      this.show();
    }
    return Promise.resolve();
  }

  private fail(): void {
    const err = this.failures.shift();
    if (err) throw err;
  }

  private show(): void {
    this.watch?.set([...this.pods.values()]);
  }
}
FakePodStatusApi satisfies new () => PodStatusApi;

export class FakePodWorkerRecords extends PodWorkerRecords {
  readonly records = new Map<string, PodSyncStatusRecord>();
  get(uid: string): Promise<PodSyncStatusRecord | undefined> {
    const r = this.records.get(uid);
    return Promise.resolve(r && structuredClone(r));
  }
}
FakePodWorkerRecords satisfies new () => PodWorkerRecords;

/** The sync loop's `pods` bucket in memory. */
export class FakeDesiredPods extends DesiredPods {
  readonly records = new Map<string, PodRecord>();
  add(pod: Pod, source = 'api'): void {
    this.records.set(pod.metadata.uid ?? '', { pod: structuredClone(pod), source, addedAt: 0, admitted: true });
  }
  all(): Promise<PodRecord[]> {
    return Promise.resolve([...this.records.values()].map((r) => structuredClone(r)));
  }
  get(uid: string): Promise<PodRecord | undefined> {
    const r = this.records.get(uid);
    return Promise.resolve(r && structuredClone(r));
  }
}
FakeDesiredPods satisfies new () => DesiredPods;

/** The StatusManager's versioned statuses, set by the test. */
export class FakeStatuses {
  readonly entries = new Map<string, StatusEntry>();
  set(uid: string, entry: StatusEntry): void {
    this.entries.set(uid, structuredClone(entry));
  }
  statuses(): [string, StatusEntry][] {
    return [...this.entries].map(([uid, e]) => [uid, structuredClone(e)]);
  }
  status(uid: string): StatusEntry | undefined {
    const e = this.entries.get(uid);
    return e && structuredClone(e);
  }
}

/** The apiserver's Events in memory: created (AlreadyExists on a name taken), patched (NotFound when gone); `failures` are thrown one per call. */
export class FakeEventSink extends EventSink {
  readonly events = new Map<string, Event>();
  readonly calls: { verb: 'create' | 'patch'; name: string; patch?: Record<string, unknown> }[] = [];
  readonly failures: Error[] = [];
  private rv = 1;

  create(event: Event): Promise<Event> {
    const name = event.metadata.name ?? '';
    this.calls.push({ verb: 'create', name });
    const err = this.failures.shift();
    if (err) return Promise.reject(err);
    const key = keyOf(event.metadata.namespace ?? '', name);
    if (this.events.has(key)) return Promise.reject(new ApiError(409, 'AlreadyExists', `events "${name}" already exists`));
    const stored = { ...structuredClone(event), metadata: { ...structuredClone(event.metadata), resourceVersion: String(this.rv++) } };
    this.events.set(key, stored);
    return Promise.resolve(structuredClone(stored));
  }

  patch(event: Event, patch: Record<string, unknown>): Promise<Event> {
    const name = event.metadata.name ?? '';
    this.calls.push({ verb: 'patch', name, patch: structuredClone(patch) });
    const err = this.failures.shift();
    if (err) return Promise.reject(err);
    const key = keyOf(event.metadata.namespace ?? '', name);
    const before = this.events.get(key);
    if (!before) return Promise.reject(new ApiError(404, 'NotFound', `events "${name}" not found`));
    const stored = { ...applyStrategicMergePatch(before, patch), metadata: { ...before.metadata, resourceVersion: String(this.rv++) } };
    this.events.set(key, stored);
    return Promise.resolve(structuredClone(stored));
  }

  /** The stored events, oldest first. */
  all(): Event[] {
    return [...this.events.values()];
  }
}
FakeEventSink satisfies new () => EventSink;

/** The sync loops' answers to podResync, in turn (the last one repeats); records each ask. */
export class FakePodResync extends PodResync {
  readonly asked: string[] = [];
  answers: ({ leading: boolean; pods: number } | undefined)[] = [{ leading: true, pods: 0 }];
  resyncAll(reason: string): Promise<{ leading: boolean; pods: number } | undefined> {
    this.asked.push(reason);
    const a = this.answers.length > 1 ? this.answers.shift() : this.answers[0];
    return Promise.resolve(a);
  }
}
