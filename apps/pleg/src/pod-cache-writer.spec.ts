import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodCacheEntry } from '@app/contracts';
import { PodCacheWriter, getPodIPs } from './pod-cache-writer.js';
import { PodCacheStore } from './ports.js';

/** The bucket as a list of writes; the next write made waits for `holdNext`, when set. */
class SlowStore extends PodCacheStore {
  readonly writes: string[] = [];
  /** The IPs of each entry written, in order. */
  readonly ips: string[][] = [];
  holdNext?: Promise<void>;
  private held(): Promise<void> | undefined {
    const h = this.holdNext;
    this.holdNext = undefined;
    return h;
  }
  load(): Promise<{ entries: PodCacheEntry[]; global: number }> {
    return Promise.resolve({ entries: [], global: 0 });
  }
  async set(e: PodCacheEntry): Promise<void> {
    await this.held();
    this.writes.push(`${e.uid}@${e.timestamp}`);
    this.ips.push(e.ips);
  }
  async delete(uid: string): Promise<void> {
    await this.held();
    this.writes.push(`${uid} deleted`);
  }
  updateGlobal(): Promise<void> {
    return Promise.resolve();
  }
}

const entry = (uid: string, timestamp: number): PodCacheEntry => ({ uid, name: uid, namespace: 'default', timestamp, sandboxStatuses: [], containerStatuses: [], ips: [] });

describe('PodCacheWriter', () => {
  const cases: { name: string; writes: [kind: 'set' | 'delete', at: number][]; want: string[]; written: boolean[] }[] = [
    { name: 'in timestamp order: all written', writes: [['set', 1], ['set', 2], ['delete', 3]], want: ['a@1', 'a@2', 'a deleted'], written: [true, true, true] },
    { name: 'an older entry after a newer one: dropped', writes: [['set', 5], ['set', 3]], want: ['a@5'], written: [true, false] },
    { name: 'an older entry after the pod\'s removal: dropped', writes: [['delete', 5], ['set', 3]], want: ['a deleted'], written: [true, false] },
    { name: 'an older removal after a newer entry: dropped', writes: [['set', 5], ['delete', 3]], want: ['a@5'], written: [true, false] },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const store = new SlowStore();
      const writer = new PodCacheWriter(store);
      const written = await Promise.all(tc.writes.map(([kind, at]) => (kind === 'set' ? writer.set(entry('a', at)) : writer.delete('a', at))));
      assert.deepEqual(store.writes, tc.want);
      assert.deepEqual(written, tc.written);
    });
  }

  it('one pod\'s writes reach the bucket one at a time, in the order they were decided', async () => {
    const store = new SlowStore();
    const writer = new PodCacheWriter(store);
    let release: () => void = () => undefined;
    store.holdNext = new Promise((r) => (release = r));
    const first = writer.set(entry('a', 1));
    const second = writer.set(entry('a', 2));
    const other = writer.set(entry('b', 1));
    await other;
    assert.deepEqual(store.writes, ['b@1'], 'another pod does not wait; the second write of a waits for the first');
    release();
    await Promise.all([first, second]);
    assert.deepEqual(store.writes, ['b@1', 'a@1', 'a@2']);
  });

  it('starts from the cache it restores, and forgets a removal once no older write can come', async () => {
    const store = new SlowStore();
    const writer = new PodCacheWriter(store);
    writer.restore([entry('a', 10)]);
    assert.equal(await writer.set(entry('a', 9)), false, 'the restored entry is newer');
    await writer.delete('a', 11);
    writer.prune(11);
    assert.equal(writer.newestOf('a'), 11, 'kept while a write stamped 11 may still run');
    assert.equal(await writer.set(entry('a', 10)), false);
    writer.prune(12);
    assert.equal(writer.newestOf('a'), undefined, 'forgotten once every write in flight is newer');
    writer.restore([]);
  });

  it('a failed write still counts: an older one cannot slip in after it', async () => {
    const store = new SlowStore();
    store.set = () => Promise.reject(new Error('timeout')); // it may have reached the bucket all the same
    const writer = new PodCacheWriter(store);
    await assert.rejects(writer.set(entry('a', 5)));
    assert.equal(await writer.delete('a', 4), false);
  });

  it('keeps a pod\'s IPs once its sandbox stopped, until the pod is removed (getPodIPs)', async () => {
    const store = new SlowStore();
    const writer = new PodCacheWriter(store);
    const sandbox = (state: string) => [{ id: 's1', state, createdAt: '1' }];
    await writer.set({ ...entry('a', 1), sandboxStatuses: sandbox('SANDBOX_READY'), ips: ['10.0.0.5'] });
    await writer.set({ ...entry('a', 2), sandboxStatuses: sandbox('SANDBOX_NOTREADY') });
    await writer.delete('a', 3);
    await writer.set({ ...entry('a', 4), sandboxStatuses: sandbox('SANDBOX_NOTREADY') });
    assert.deepEqual(store.ips, [['10.0.0.5'], ['10.0.0.5'], []], 'kept while the stopped sandbox is there, not after the pod was removed');
    writer.restore([{ ...entry('b', 5), ips: ['10.0.0.6'] }]);
    await writer.set({ ...entry('b', 6), sandboxStatuses: sandbox('SANDBOX_NOTREADY') });
    assert.deepEqual(store.ips.at(-1), ['10.0.0.6'], 'from the restored cache too (a PLEG leading after another)');
  });
});

describe('getPodIPs', () => {
  const ready = [{ id: 's1', state: 'SANDBOX_READY' }];
  const stopped = [{ id: 's1', state: 'SANDBOX_NOTREADY' }];
  const cases: { name: string; ips: string[]; sandboxes: { id: string; state: string }[]; previous: string[] | undefined; want: string[] }[] = [
    { name: 'the runtime reports IPs: its own', ips: ['10.0.0.7'], sandboxes: ready, previous: ['10.0.0.5'], want: ['10.0.0.7'] },
    { name: 'no IPs and no previous ones: none', ips: [], sandboxes: stopped, previous: undefined, want: [] },
    { name: 'no IPs but a ready sandbox (a host-network pod): none', ips: [], sandboxes: ready, previous: ['10.0.0.5'], want: [] },
    { name: 'no IPs and no ready sandbox (an exited pod): the previous ones', ips: [], sandboxes: stopped, previous: ['10.0.0.5', 'fd00::5'], want: ['10.0.0.5', 'fd00::5'] },
    { name: 'no sandbox at all: the previous ones', ips: [], sandboxes: [], previous: ['10.0.0.5'], want: ['10.0.0.5'] },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(getPodIPs({ ips: tc.ips, sandboxStatuses: tc.sandboxes }, tc.previous), tc.want));
});
