import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { shardOf } from '@app/contracts';
import { NotLeaderError } from '@app/leader-election';
import { ShardFences, ShardManager, fairShare } from './shards.js';
import { FakeLeaseStore } from './testing.js';

const T0 = 1_000_000;
const LEASE = 6000;
const RENEW = 2000;

/**
 * One pod-worker replica's shard manager, recording what it was given, what
 * it lost and what it handed back; `onYield` stands for the shard's pods
 * finishing their steps in flight (at once by default).
 */
function replica(store: FakeLeaseStore, clock: FakeClock, instance: string, shards = 4, onYield?: (shard: number) => Promise<void>, fences?: ShardFences) {
  const acquired: number[] = [];
  const lost: number[] = [];
  const yielded: number[] = [];
  const manager = new ShardManager({
    store,
    clock,
    logger: silentLogger(),
    options: { shards, instance, leaseMs: LEASE, renewMs: RENEW },
    onAcquire: (s) => {
      acquired.push(s);
      return Promise.resolve();
    },
    onLose: (s) => void lost.push(s),
    onYield: (s) => {
      yielded.push(s);
      return onYield ? onYield(s) : Promise.resolve();
    },
    ...(fences ? { fences } : {}),
  });
  return { manager, acquired, lost, yielded };
}

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function setup() {
  const clock = new FakeClock(T0);
  const store = new FakeLeaseStore();
  return { clock, store };
}

describe('ShardManager: pod-worker shard leases', () => {
  it('alone, a replica takes every shard, each with a lease of leaseMs, and resyncs each', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    await a.manager.reconcile();
    assert.deepEqual(a.manager.ownedShards, [0, 1, 2, 3]);
    assert.deepEqual(a.acquired, [0, 1, 2, 3]);
    assert.deepEqual(store.owners(4), ['a', 'a', 'a', 'a']);
    assert.equal(store.lease(0)?.expiresAt, T0 + LEASE);
  });

  describe('fair share: ceil(shards / live owners), taken lowest free shard first', () => {
    const cases: { name: string; shards: number; others: { shard: number; owner: string; expiresIn: number }[]; want: number[] }[] = [
      { name: 'another replica holds two of four: the other two', shards: 4, others: [{ shard: 2, owner: 'b', expiresIn: LEASE }, { shard: 3, owner: 'b', expiresIn: LEASE }], want: [0, 1] },
      { name: 'another holds one of four: two (the fair share), not three', shards: 4, others: [{ shard: 0, owner: 'b', expiresIn: LEASE }], want: [1, 2] },
      { name: 'two others hold one each of five: two (ceil 5/3)', shards: 5, others: [{ shard: 0, owner: 'b', expiresIn: LEASE }, { shard: 4, owner: 'c', expiresIn: LEASE }], want: [1, 2] },
      { name: 'an expired lease counts for nobody and is free', shards: 4, others: [{ shard: 1, owner: 'b', expiresIn: 0 }, { shard: 2, owner: 'b', expiresIn: -1 }], want: [0, 1, 2, 3] },
      { name: 'a released lease (no owner) is free', shards: 2, others: [{ shard: 0, owner: '', expiresIn: LEASE }], want: [0, 1] },
    ];
    for (const tc of cases) {
      it(tc.name, async () => {
        const { clock, store } = setup();
        for (const o of tc.others) store.write(o.shard, { owner: o.owner, expiresAt: T0 + o.expiresIn });
        const a = replica(store, clock, 'a', tc.shards);
        await a.manager.reconcile();
        assert.deepEqual(a.manager.ownedShards, tc.want);
        assert.deepEqual(a.acquired, tc.want);
        for (const o of tc.others) if (o.expiresIn > 0 && o.owner) assert.equal(store.lease(o.shard)?.owner, o.owner, `shard ${o.shard} left to ${o.owner}`);
      });
    }
  });

  it('over its fair share (a third replica shows up), it gives back its highest shards and releases their leases', async () => {
    const { clock, store } = setup();
    store.write(4, { owner: 'b', expiresAt: T0 + LEASE });
    store.write(5, { owner: 'b', expiresAt: T0 + LEASE });
    const a = replica(store, clock, 'a', 6);
    await a.manager.reconcile();
    assert.deepEqual(a.manager.ownedShards, [0, 1, 2], 'ceil(6/2) = 3');
    store.write(3, { owner: 'c', expiresAt: T0 + LEASE });
    await a.manager.reconcile();
    assert.deepEqual(a.manager.ownedShards, [0, 1], 'ceil(6/3) = 2');
    assert.deepEqual(a.yielded, [2], 'handed back, its pods yielded first');
    assert.deepEqual(a.lost, []);
    assert.equal(store.lease(2), undefined, 'the lease of shard 2 was released');
  });

  it('renews its leases every renewMs, so they never expire while it lives', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    a.manager.start();
    await clock.step(0);
    assert.deepEqual(a.manager.ownedShards, [0, 1, 2, 3]);
    for (let i = 1; i <= 10; i++) {
      await clock.step(RENEW);
      assert.equal(store.lease(0)?.expiresAt, clock.now() + LEASE, `renewed at round ${i}`);
    }
    // Well past the first lease's lifetime: another replica finds nothing free.
    const b = replica(store, clock, 'b');
    await b.manager.reconcile();
    assert.deepEqual(b.manager.ownedShards, []);
    assert.deepEqual(a.manager.ownedShards, [0, 1, 2, 3]);
    assert.deepEqual(a.acquired, [0, 1, 2, 3], 'renewals do not resync');
    assert.deepEqual(a.lost, []);
    await a.manager.stop();
  });

  it('a round does not wait for a takeover\'s resync: while one hangs (a pod\'s image pull in flight), every lease is still renewed on time', async () => {
    const { clock, store } = setup();
    const fences = new ShardFences({ clock, leaseMs: LEASE, shardCount: 4 });
    const followed: number[] = [];
    const resynced: number[] = [];
    const hung = deferred();
    const a = new ShardManager({
      store,
      clock,
      logger: silentLogger(),
      options: { shards: 4, instance: 'a', leaseMs: LEASE, renewMs: RENEW },
      // As ShardWork.acquire: the shard followed at once, its pods resynced after; shard 1's resync never ends.
      onAcquire: async (s) => {
        followed.push(s);
        await Promise.resolve();
        assert.deepEqual(followed, [0, 1, 2, 3], 'every shard taken is followed before any is resynced');
        if (s === 1) await hung.promise;
        resynced.push(s);
      },
      onLose: () => undefined,
      fences,
    });
    a.start();
    await clock.step(0);
    assert.deepEqual(a.ownedShards, [0, 1, 2, 3]);
    assert.deepEqual(resynced, [0, 2, 3], 'the others resynced, shard 1 still waits');
    for (let i = 1; i <= 5; i++) {
      await clock.step(RENEW);
      for (const s of [0, 1, 2, 3]) assert.equal(store.lease(s)?.expiresAt, clock.now() + LEASE, `shard ${s} renewed at round ${i}`);
      assert.deepEqual([0, 1, 2, 3].map((s) => fences.fence(s).fencingToken !== undefined), [true, true, true, true], `fences open at round ${i}`);
    }
    const b = replica(store, clock, 'b');
    await b.manager.reconcile();
    assert.deepEqual(b.manager.ownedShards, [], 'no lease expired for another replica to take');
    hung.resolve();
    await clock.step(0);
    assert.deepEqual(resynced, [0, 2, 3, 1]);
    await a.stop();
  });

  it('a takeover resync that fails is logged; the shard stays owned and its lease renewed', async () => {
    const { clock, store } = setup();
    const a = new ShardManager({
      store,
      clock,
      logger: silentLogger(),
      options: { shards: 2, instance: 'a', leaseMs: LEASE, renewMs: RENEW },
      onAcquire: (s) => (s === 0 ? Promise.reject(new Error('listing failed')) : Promise.resolve()),
      onLose: () => undefined,
    });
    a.start();
    await clock.step(RENEW);
    assert.deepEqual(a.ownedShards, [0, 1]);
    assert.equal(store.lease(0)?.expiresAt, clock.now() + LEASE);
    await a.stop();
  });

  it('a replica that died: its leases expire after leaseMs and another takes its shards over and resyncs them', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    await a.manager.reconcile(); // then it dies: no more rounds
    const b = replica(store, clock, 'b');
    await clock.step(LEASE - 1);
    await b.manager.reconcile();
    assert.deepEqual(b.manager.ownedShards, [], 'not before the leases expire');
    await clock.step(1);
    await b.manager.reconcile();
    assert.deepEqual(b.manager.ownedShards, [0, 1, 2, 3]);
    assert.deepEqual(b.acquired, [0, 1, 2, 3]);
    assert.deepEqual(store.owners(4), ['b', 'b', 'b', 'b']);
    // The dead one comes back: its leases are someone else's now, so it gives its shards up.
    await a.manager.reconcile();
    assert.deepEqual(a.manager.ownedShards, []);
    assert.deepEqual(a.lost, [0, 1, 2, 3]);
    assert.deepEqual(store.owners(4), ['b', 'b', 'b', 'b'], 'it did not write over them');
  });

  it('stop gives every shard up and releases its leases, so another replica takes them at once', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    a.manager.start();
    await clock.step(0);
    await a.manager.stop();
    assert.deepEqual(a.yielded, [0, 1, 2, 3]);
    assert.deepEqual(a.manager.ownedShards, []);
    assert.deepEqual(store.owners(4), [undefined, undefined, undefined, undefined]);
    assert.equal(store.calls.filter((c) => c.startsWith('release')).length, 4);
    assert.equal(clock.waiting, 0, 'no round is scheduled any more');
    const callsAfterStop = store.calls.length;
    await clock.step(RENEW * 5);
    assert.equal(store.calls.length, callsAfterStop, 'a stopped manager does nothing');
    const b = replica(store, clock, 'b');
    await b.manager.reconcile();
    assert.deepEqual(b.manager.ownedShards, [0, 1, 2, 3], 'no wait for expiry');
  });

  it('a replica that joins while another holds every shard gets its fair share within a few rounds', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    a.manager.start();
    await clock.step(0);
    const b = replica(store, clock, 'b');
    b.manager.start();
    await clock.step(LEASE + 3 * RENEW);
    try {
      assert.deepEqual([a.manager.ownedShards.length, b.manager.ownedShards.length], [2, 2]);
    } finally {
      await Promise.all([a.manager.stop(), b.manager.stop()]);
    }
  });

  it('a replica that joins (its heartbeat, no lease) takes its fair share within one lease period, the other handing back its highest shards', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    a.manager.start();
    await clock.step(0);
    await clock.step(RENEW / 2); // joins between two of a's rounds
    const b = replica(store, clock, 'b');
    b.manager.start();
    await clock.step(0);
    assert.deepEqual(store.announced, ['a', 'b'], 'each replica announces itself');
    assert.deepEqual(b.manager.ownedShards, [], 'nothing is free yet');
    await clock.step(LEASE);
    try {
      assert.deepEqual(a.manager.ownedShards, [0, 1]);
      assert.deepEqual(b.manager.ownedShards, [2, 3]);
      assert.deepEqual(a.yielded, [3, 2]);
      assert.deepEqual(a.lost, [], 'nothing was taken from it: it handed the shards back');
      assert.deepEqual(b.acquired, [2, 3]);
    } finally {
      await Promise.all([a.manager.stop(), b.manager.stop()]);
    }
  });

  it('a shard is handed back in order: its lease is renewed while its pods finish their steps, and released only then', async () => {
    const { clock, store } = setup();
    const inFlight = deferred();
    const a = replica(store, clock, 'a', 4, () => inFlight.promise);
    a.manager.start();
    await clock.step(0);
    const b = replica(store, clock, 'b');
    b.manager.start();
    await clock.step(3 * LEASE);
    try {
      assert.deepEqual(a.yielded, [3, 2], 'a started handing back two shards');
      assert.deepEqual(a.manager.ownedShards, [0, 1, 2, 3], 'but holds them while a step is in flight');
      assert.deepEqual(b.manager.ownedShards, []);
      assert.equal(store.lease(3)?.owner, 'a');
      assert.ok((store.lease(3)?.expiresAt ?? 0) > clock.now(), 'the lease is still renewed: it never expires under a step in flight');
      inFlight.resolve();
      await clock.step(2 * RENEW);
      assert.deepEqual(a.manager.ownedShards, [0, 1]);
      assert.deepEqual(b.manager.ownedShards, [2, 3]);
      assert.deepEqual(b.acquired, [2, 3]);
    } finally {
      await Promise.all([a.manager.stop(), b.manager.stop()]);
    }
  });

  it('a lease it could not renew (the bucket unreachable) is given up at its expiry, before another replica may take it', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    a.manager.start();
    await clock.step(0);
    store.unreachable = true;
    await clock.step(LEASE - 1);
    assert.deepEqual(a.lost, [], 'still its own until the lease it last wrote expires');
    await clock.step(RENEW);
    try {
      assert.deepEqual(a.lost, [0, 1, 2, 3]);
      assert.deepEqual(a.manager.ownedShards, []);
    } finally {
      store.unreachable = false;
      await a.manager.stop();
    }
  });

  it('a replica waiting for a dead replica\'s leases takes them the moment they expire, not at its next round', async () => {
    const { clock, store } = setup();
    const a = replica(store, clock, 'a');
    await a.manager.reconcile(); // then it dies
    await clock.step(RENEW / 4);
    const b = replica(store, clock, 'b');
    b.manager.start();
    await clock.step(LEASE - RENEW / 4);
    try {
      assert.equal(clock.now(), T0 + LEASE);
      assert.deepEqual(b.manager.ownedShards, [0, 1, 2, 3]);
    } finally {
      await b.manager.stop();
    }
  });

  it('a replica at its fair share takes a dead replica\'s shards the moment its leases expire', async () => {
    const { clock, store } = setup();
    // a holds shards 0 and 1 and then dies.
    store.write(0, { owner: 'a', expiresAt: T0 + LEASE });
    store.write(1, { owner: 'a', expiresAt: T0 + LEASE });
    await store.announce('a', T0 + LEASE);
    await clock.step(RENEW / 4);
    const b = replica(store, clock, 'b');
    b.manager.start();
    await clock.step(0);
    assert.deepEqual(b.manager.ownedShards, [2, 3], 'its fair share while a lives');
    await clock.step(T0 + LEASE - clock.now());
    try {
      assert.deepEqual(b.manager.ownedShards, [0, 1, 2, 3]);
    } finally {
      await b.manager.stop();
    }
  });

  describe('a shard handed over is taken at once (issue 28 item 7)', () => {
    it('a lease another replica releases (it stops) is taken the moment it is released, not at the next round', async () => {
      const { clock, store } = setup();
      const a = replica(store, clock, 'a');
      a.manager.start();
      await clock.step(0);
      const b = replica(store, clock, 'b');
      b.manager.start();
      await clock.step(LEASE + 3 * RENEW);
      assert.deepEqual([a.manager.ownedShards, b.manager.ownedShards], [[0, 1], [2, 3]]);
      const before = clock.now();
      await b.manager.stop();
      await clock.step(0);
      try {
        assert.equal(clock.now(), before, 'no time passed');
        assert.deepEqual(a.manager.ownedShards, [0, 1, 2, 3]);
        assert.deepEqual(a.acquired.slice(-2), [2, 3], 'and resynced them');
      } finally {
        await a.manager.stop();
      }
    });

    it('a shard whose pods finish their steps after the round stopped waiting for them is released then, and taken by the other at once', async () => {
      const { clock, store } = setup();
      const inFlight = deferred();
      const a = replica(store, clock, 'a', 4, () => inFlight.promise);
      a.manager.start();
      await clock.step(0);
      const b = replica(store, clock, 'b');
      b.manager.start();
      await clock.step(3 * LEASE);
      assert.deepEqual(a.yielded, [3, 2]);
      assert.deepEqual(b.manager.ownedShards, []);
      inFlight.resolve();
      await clock.step(0);
      try {
        assert.deepEqual(a.manager.ownedShards, [0, 1]);
        assert.deepEqual(b.manager.ownedShards, [2, 3]);
      } finally {
        await Promise.all([a.manager.stop(), b.manager.stop()]);
      }
    });
  });

  describe('ShardFences: what is done in a shard\'s name is fenced by its lease (issue 28 item 8)', () => {
    it('the fence gives the lease\'s revision while more than a quarter of the lease is left, as last written; refuses from then on, before any round noticed', async () => {
      const { clock, store } = setup();
      const fences = new ShardFences({ clock, leaseMs: LEASE, shardCount: 4 });
      const a = replica(store, clock, 'a', 4, undefined, fences);
      await a.manager.reconcile(); // no timers: as an event loop that then stalls
      const token = fences.fence(1).check('write');
      assert.equal(token, (await store.get(1))?.revision, 'the lease\'s revision');
      await clock.step((LEASE * 3) / 4 - 1);
      assert.equal(fences.fence(1).fencingToken, token, 'still ours');
      await clock.step(1);
      assert.deepEqual(a.manager.ownedShards, [0, 1, 2, 3], 'no round ran');
      assert.equal(fences.fence(1).fencingToken, undefined);
      assert.throws(() => fences.fence(1).check('write the workers record'), (e: unknown) => e instanceof NotLeaderError && /not the owner of pod-worker shard 1: refused to write the workers record/.test(e.message));
    });

    it('renewals keep it open; a shard lost, handed back or given up at stop is refused at once', async () => {
      const { clock, store } = setup();
      const fences = new ShardFences({ clock, leaseMs: LEASE, shardCount: 4 });
      const a = replica(store, clock, 'a', 4, undefined, fences);
      a.manager.start();
      await clock.step(0);
      await clock.step(3 * LEASE);
      assert.deepEqual([0, 1, 2, 3].map((s) => fences.fence(s).fencingToken !== undefined), [true, true, true, true], 'renewed all along');
      store.write(0, { owner: 'other', expiresAt: clock.now() + LEASE }); // taken behind its back
      const b = replica(store, clock, 'b');
      b.manager.start();
      await clock.step(LEASE);
      try {
        assert.equal(fences.fence(0).fencingToken, undefined, 'lost');
        for (const s of [2, 3]) if (!a.manager.ownedShards.includes(s)) assert.equal(fences.fence(s).fencingToken, undefined, `shard ${s} handed back`);
        const kept = a.manager.ownedShards;
        assert.ok(kept.length > 0 && kept.every((s) => fences.fence(s).fencingToken !== undefined));
        await a.manager.stop();
        assert.ok(kept.every((s) => fences.fence(s).fencingToken === undefined), 'given up at stop');
      } finally {
        await Promise.all([a.manager.stop(), b.manager.stop()]);
      }
    });

    it('a pod\'s fence is its shard\'s', async () => {
      const { clock, store } = setup();
      const fences = new ShardFences({ clock, leaseMs: LEASE, shardCount: 2 });
      store.write(1, { owner: 'other', expiresAt: T0 + LEASE });
      await replica(store, clock, 'a', 2, undefined, fences).manager.reconcile();
      const uids = ['u-0', 'u-1', 'u-2', 'u-3', 'u-4', 'u-5'];
      const inShard0 = uids.filter((u) => shardOf(u, 2) === 0);
      assert.ok(inShard0.length > 0 && inShard0.length < uids.length, 'the UIDs fall in both shards');
      assert.deepEqual(uids.filter((u) => fences.forPod(u).fencingToken !== undefined), inShard0);
    });
  });

  describe('stop', () => {
    it('waits for the pods\' steps in flight before it releases the leases', async () => {
      const { clock, store } = setup();
      const inFlight = deferred();
      const a = replica(store, clock, 'a', 4, () => inFlight.promise);
      await a.manager.reconcile();
      const stopped = a.manager.stop();
      await clock.step(0);
      assert.deepEqual(store.owners(4), ['a', 'a', 'a', 'a'], 'not released under a step in flight');
      inFlight.resolve();
      await stopped;
      assert.deepEqual(store.owners(4), [undefined, undefined, undefined, undefined]);
      assert.deepEqual(store.announced, [], 'its heartbeat is withdrawn');
    });

    it('pods that do not yield in time keep their shards\' leases, which expire: the shards are never worked twice', async () => {
      const { clock, store } = setup();
      const a = replica(store, clock, 'a', 4, () => new Promise<void>(() => undefined));
      await a.manager.reconcile();
      const stopped = a.manager.stop(5000);
      await clock.step(5000);
      await stopped;
      assert.deepEqual(store.owners(4), ['a', 'a', 'a', 'a']);
      const b = replica(store, clock, 'b');
      await b.manager.reconcile();
      assert.deepEqual(b.manager.ownedShards, [], 'not before they expire');
      await clock.step(LEASE);
      await b.manager.reconcile();
      assert.deepEqual(b.manager.ownedShards, [0, 1, 2, 3]);
    });
  });

  it('heartbeats of replicas gone for more than a lease period are removed', async () => {
    const { clock, store } = setup();
    await store.announce('gone', T0);
    await store.announce('recent', T0 + LEASE);
    await clock.step(LEASE + 1);
    const a = replica(store, clock, 'a');
    await a.manager.reconcile();
    assert.deepEqual(store.announced, ['a', 'recent']);
  });

  describe('fairShare: exactly the shards, the first replicas by name one more', () => {
    const cases = [
      { shards: 16, replicas: ['a', 'b', 'c'], want: [6, 5, 5] },
      { shards: 4, replicas: ['a', 'b', 'c'], want: [2, 1, 1] },
      { shards: 4, replicas: ['a', 'b'], want: [2, 2] },
      { shards: 2, replicas: ['a', 'b', 'c'], want: [1, 1, 0] },
    ];
    for (const tc of cases) {
      it(`${tc.shards} shards over ${tc.replicas.join(', ')}: ${tc.want.join(', ')}`, () => {
        assert.deepEqual(tc.replicas.map((r) => fairShare(tc.shards, tc.replicas, r)), tc.want);
      });
    }
  });

  describe('compare-and-set conflicts', () => {
    const cases: { name: string; before: (store: FakeLeaseStore) => void; want: number[]; lost: number[]; acquired: number[]; yielded?: number[] }[] = [
      { name: 'renewal loses the race: the shard is given up', before: (s) => s.loseNextRace(1), want: [0, 2, 3], lost: [1], acquired: [] },
      { name: 'the lease was taken behind its back: given up, and with b an owner now, the fair share drops to two', before: (s) => s.write(2, { owner: 'b', expiresAt: T0 + 3 * LEASE }), want: [0, 1], lost: [2], acquired: [], yielded: [3] },
      { name: 'the lease was rewritten by itself elsewhere (a stale revision): given up', before: (s) => s.write(3, { owner: 'a', expiresAt: T0 + 3 * LEASE }), want: [0, 1, 2], lost: [3], acquired: [] },
    ];
    for (const tc of cases) {
      it(tc.name, async () => {
        const { clock, store } = setup();
        const a = replica(store, clock, 'a');
        await a.manager.reconcile();
        a.acquired.length = 0;
        tc.before(store);
        await clock.step(RENEW);
        await a.manager.reconcile();
        assert.deepEqual(a.manager.ownedShards, tc.want);
        assert.deepEqual(a.lost, tc.lost);
        assert.deepEqual(a.acquired, tc.acquired);
        assert.deepEqual(a.yielded, tc.yielded ?? []);
      });
    }

    it('taking a free shard loses the race: not owned, not resynced, the others still taken', async () => {
      const { clock, store } = setup();
      store.loseNextRace(0);
      const a = replica(store, clock, 'a');
      await a.manager.reconcile();
      assert.deepEqual(a.manager.ownedShards, [1, 2, 3]);
      assert.deepEqual(a.acquired, [1, 2, 3]);
      assert.equal(store.lease(0)?.owner, 'racer');
    });

    it('two replicas racing for the same free shards never both own one', async () => {
      const { clock, store } = setup();
      const a = replica(store, clock, 'a');
      const b = replica(store, clock, 'b');
      await Promise.all([a.manager.reconcile(), b.manager.reconcile()]);
      const both = a.manager.ownedShards.filter((s) => b.manager.ownedShards.includes(s));
      assert.deepEqual(both, []);
      for (const s of a.manager.ownedShards) assert.equal(store.lease(s)?.owner, 'a');
      for (const s of b.manager.ownedShards) assert.equal(store.lease(s)?.owner, 'b');
    });
  });
});
