/** Test doubles of @app/pod-manager: a podManager and a read model in memory, recording their reads. */
import type { Pod, PodList, PodRecord, PodStatus } from '@app/contracts';
import { PodManager } from './pod-manager.js';
import { PodReadModel, podList } from './read-model.js';

export class FakePodManager extends PodManager {
  readonly pods = new Map<string, PodRecord>();
  readonly calls: string[] = [];
  private failure: Error | undefined;

  constructor(records: readonly PodRecord[] = []) {
    super();
    for (const r of records) this.pods.set(r.pod.metadata.uid ?? '', r);
  }

  /** The next read rejects with `err`. */
  failNext(err = new Error('pods bucket unreachable')): void {
    this.failure = err;
  }

  all(): Promise<PodRecord[]> {
    this.calls.push('all');
    return this.read(() => [...this.pods.values()]);
  }

  get(uid: string): Promise<PodRecord | undefined> {
    this.calls.push(`get ${uid}`);
    return this.read(() => this.pods.get(uid));
  }

  private read<T>(fn: () => T): Promise<T> {
    const err = this.failure;
    this.failure = undefined;
    return err ? Promise.reject(err) : Promise.resolve(fn());
  }
}

/** The read model over a FakePodManager's records and statuses set by the test; `changed(uid)` tells the listeners. */
export class FakePodReadModel extends PodReadModel {
  readonly statuses = new Map<string, PodStatus>();
  private readonly listeners = new Set<(uid: string | undefined) => void>();

  constructor(readonly pods = new FakePodManager()) {
    super();
  }

  async listPods(): Promise<PodList> {
    return podList(await this.pods.all(), (uid) => this.statuses.get(uid));
  }

  async getPod(namespace: string, name: string): Promise<Pod | undefined> {
    return (await this.listPods()).items.find((p) => p.metadata.namespace === namespace && p.metadata.name === name);
  }

  onChange(listener: (uid: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  changed(uid?: string): void {
    for (const l of this.listeners) l(uid);
  }
}

FakePodManager satisfies new (records?: readonly PodRecord[]) => PodManager;
FakePodReadModel satisfies new (pods?: FakePodManager) => PodReadModel;
