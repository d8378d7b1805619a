import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Clock } from '@app/clock';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { KvLeaderLeaseStore } from './kv-leader-lease-store.js';
import { DEFAULT_LEADER_ELECTION, FencingTokenFilter, LeaderElector, LeaderLeaseStore, NotLeaderError, leaderElectionProblem, type LeaderElectionRecord, type LeaderLeaseSnapshot } from './leader-election.js';
import { FakeKv } from '@app/nats/testing';

const NODE = 'node-a';
const SERVICE = 'sync-loop';
const KEY = `${NODE}.leader.${SERVICE}`;
const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = DEFAULT_LEADER_ELECTION;

/** The KV store of one replica, which can be cut off from NATS: its calls then hang until it is reconnected. */
class PartitionableStore extends LeaderLeaseStore {
  private cut = false;
  /** Calls reject at once (NATS answers with an error) while set. */
  failing = false;
  calls = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly inner: LeaderLeaseStore) {
    super();
  }
  partition(): void {
    this.cut = true;
  }
  heal(): void {
    this.cut = false;
    for (const w of this.waiting.splice(0)) w();
  }
  private async reach(): Promise<void> {
    this.calls++;
    if (this.failing) throw new Error('no responders');
    if (this.cut) await new Promise<void>((r) => this.waiting.push(r));
  }
  async get(): Promise<LeaderLeaseSnapshot | undefined> {
    await this.reach();
    return this.inner.get();
  }
  async put(record: LeaderElectionRecord, revision: number): Promise<number | undefined> {
    await this.reach();
    return this.inner.put(record, revision);
  }
  async release(revision: number): Promise<void> {
    await this.reach();
    return this.inner.release(revision);
  }
}

interface Replica {
  id: string;
  elector: LeaderElector;
  store: PartitionableStore;
  /** [time, 'start' | 'stop', token or reason], by the shared clock. */
  log: [number, string, string | number][];
}

/** The shared fake time, read `offset` ms off (as a process whose wall clock is wrong); its timers are the shared clock's. */
class OffsetClock extends Clock {
  constructor(
    private readonly base: FakeClock,
    public offset = 0,
  ) {
    super();
  }
  now(): number {
    return this.base.now() + this.offset;
  }
  setTimer(ms: number, fn: () => void) {
    return this.base.setTimer(ms, fn);
  }
}

/** Replicas `ids` on one bucket; `offsets` sets a replica's wall clock off by that many ms. */
function setup(ids: string[] = ['a', 'b'], offsets: Record<string, number> = {}) {
  const kv = new FakeKv('leases');
  const clock = new FakeClock();
  const t0 = clock.now();
  const replicas = ids.map((id): Replica => {
    const store = new PartitionableStore(new KvLeaderLeaseStore(kv, NODE, SERVICE));
    const elector = new LeaderElector(store, new OffsetClock(clock, offsets[id] ?? 0), silentLogger(), { identity: id, leaseDurationMs, renewDeadlineMs, retryPeriodMs });
    const log: Replica['log'] = [];
    elector.subscribe({
      onStartedLeading: (token) => void log.push([clock.now() - t0, 'start', token]),
      onStoppedLeading: (reason) => void log.push([clock.now() - t0, 'stop', reason]),
    });
    return { id, elector, store, log };
  });
  const leaders = () => replicas.filter((r) => r.elector.isLeader).map((r) => r.id);
  const record = () => {
    const text = kv.text(KEY);
    return text ? (JSON.parse(text) as LeaderElectionRecord) : undefined;
  };
  /** Steps `ms` in `slice`-ms steps, checking after each that at most one replica leads. */
  const run = async (ms: number, slice = 50) => {
    for (let t = 0; t < ms; t += slice) {
      await clock.step(slice);
      assert.ok(leaders().length <= 1, `two leaders at +${clock.now() - t0}ms: ${leaders().join(', ')}`);
    }
  };
  return { kv, clock, t0, replicas, leaders, record, run, at: () => clock.now() - t0 };
}

/** Starts `a` alone until it leads, then the others. */
async function withLeaderA(s: ReturnType<typeof setup>): Promise<void> {
  const [a, ...others] = s.replicas;
  a?.elector.start();
  await s.run(100);
  assert.deepEqual(s.leaders(), ['a']);
  for (const r of others) r.elector.start();
  await s.run(1000);
}

/** SIGKILL: the process and its timers are gone; nothing more is written. */
function kill(r: Replica): void {
  r.store.partition();
  void r.elector.stop(0);
}

describe('LeaderElector', () => {
  it('a lone candidate leads at once, under <node>.leader.<service>, with the revision of its write as fencing token', async () => {
    const s = setup(['a']);
    const a = s.replicas[0]!;
    a.elector.start();
    await s.run(50);
    assert.deepEqual(s.leaders(), ['a']);
    const rec = s.record();
    assert.equal(rec?.holderIdentity, 'a');
    assert.equal(rec?.leaseDurationMs, leaseDurationMs);
    assert.equal(rec?.leaderTransitions, 0);
    const token = a.elector.fencingToken;
    assert.equal(token, (await s.kv.get(KEY))?.revision);
    assert.deepEqual(a.log, [[0, 'start', token]]);
    assert.equal(a.elector.check('write'), token);
    assert.deepEqual({ ...a.elector.status(), since: '' }, { role: 'leader', identity: 'a', leader: 'a', token, since: '' });
  });

  it('renews well inside the lease: one write per retry period, the token unchanged through the term', async () => {
    const s = setup(['a']);
    const a = s.replicas[0]!;
    a.elector.start();
    await s.run(50);
    const token = a.elector.fencingToken;
    const before = s.kv.calls.filter((c) => c.startsWith('update')).length;
    await s.run(10_000);
    const renewals = s.kv.calls.filter((c) => c.startsWith('update')).length - before;
    assert.ok(renewals >= 10_000 / retryPeriodMs - 1 && renewals <= 10_000 / retryPeriodMs + 1, `${renewals} renewals in 10s`);
    assert.equal(a.elector.fencingToken, token);
    assert.deepEqual(a.log.map((l) => l[1]), ['start']);
  });

  it('a standby does not act while the leader renews, however old the times in its record look to it', async () => {
    // b's wall clock is an hour ahead of a's: by the record's renewTime, a's lease expired long ago.
    const s = setup(['a', 'b'], { b: 3_600_000 });
    await withLeaderA(s);
    await s.run(30_000);
    assert.deepEqual(s.leaders(), ['a']);
    assert.deepEqual(s.replicas[1]?.log, []);
    assert.deepEqual(s.replicas[1]?.elector.status().role, 'standby');
    assert.deepEqual(s.replicas[1]?.elector.status().leader, 'a');
    assert.throws(() => s.replicas[1]?.elector.check('write the pods bucket'), NotLeaderError);
  });

  it('the leader killed: the standby leads within a lease duration of the last renewal, with a higher token', async () => {
    const s = setup();
    await withLeaderA(s);
    const [a, b] = s.replicas as [Replica, Replica];
    const oldToken = a.elector.fencingToken ?? 0;
    await s.run(230); // somewhere between two renewals
    const killedAt = s.at();
    kill(a);
    await s.run(6000, 10);
    const started = b.log.find((l) => l[1] === 'start');
    assert.ok(started, 'b never led');
    const failover = started[0] - killedAt;
    assert.ok(failover <= leaseDurationMs + 50, `failover took ${failover}ms`);
    assert.ok(failover >= leaseDurationMs - retryPeriodMs, `b took over after only ${failover}ms`);
    assert.ok((b.elector.fencingToken ?? 0) > oldToken);
    assert.equal(s.record()?.holderIdentity, 'b');
    assert.equal(s.record()?.leaderTransitions, 1);
  });

  it('a standby that cannot read the lease past its expiry retries once a retry period, not in a tight loop', async () => {
    const s = setup();
    await withLeaderA(s);
    const [a, b] = s.replicas as [Replica, Replica];
    kill(a);
    b.store.failing = true;
    const before = b.store.calls;
    await s.run(10_000);
    const calls = b.store.calls - before;
    assert.ok(calls <= 10_000 / retryPeriodMs + 2, `${calls} calls in 10s`);
    b.store.failing = false;
    await s.run(retryPeriodMs + 50);
    assert.deepEqual(s.leaders(), ['b']);
  });

  it('a leader cut off from NATS stops acting at its renew deadline, before the standby takes over', async () => {
    const s = setup();
    await withLeaderA(s);
    const [a, b] = s.replicas as [Replica, Replica];
    await s.run(170);
    a.store.partition();
    const cutAt = s.at();
    await s.run(6000, 10);
    const stopped = a.log.find((l) => l[1] === 'stop');
    const started = b.log.find((l) => l[1] === 'start');
    assert.ok(stopped && started, JSON.stringify({ a: a.log, b: b.log }));
    assert.ok(stopped[0] - cutAt <= renewDeadlineMs, `a stopped ${stopped[0] - cutAt}ms after the cut`);
    assert.ok(started[0] - stopped[0] >= leaseDurationMs - renewDeadlineMs - retryPeriodMs, `b started ${started[0] - stopped[0]}ms after a stopped`);
    assert.match(String(stopped[2]), /renew deadline/);
    // Healed, a finds b leading: it stays a standby (its late renewal loses the compare-and-set).
    a.store.heal();
    await s.run(3000);
    assert.deepEqual(s.leaders(), ['b']);
    assert.equal(a.elector.status().leader, 'b');
  });

  it('the fencing token is refused from the renew deadline on, even before the step-down timer has run', async () => {
    const fake = new FakeClock();
    const clock = new OffsetClock(fake);
    const store = new PartitionableStore(new KvLeaderLeaseStore(new FakeKv(), NODE, SERVICE));
    const elector = new LeaderElector(store, clock, silentLogger(), { identity: 'a', leaseDurationMs, renewDeadlineMs, retryPeriodMs });
    elector.start();
    await fake.step(50);
    assert.equal(elector.isLeader, true);
    store.partition();
    // Time jumps past the deadline without any timer running, as after a blocked event loop.
    clock.offset = renewDeadlineMs;
    assert.equal(elector.fencingToken, undefined);
    assert.throws(() => elector.check('dispatch work'), /not the leader: refused to dispatch work/);
  });

  it('renewal errors inside the deadline do not cost the leadership', async () => {
    const s = setup(['a']);
    const a = s.replicas[0]!;
    a.elector.start();
    await s.run(50);
    const token = a.elector.fencingToken;
    for (let i = 0; i < 3; i++) {
      s.kv.failNext('update', new Error('timeout'));
      await s.run(retryPeriodMs);
    }
    await s.run(2000);
    assert.equal(a.elector.fencingToken, token);
    assert.deepEqual(a.log.map((l) => l[1]), ['start']);
  });

  it('a leader whose lease was overwritten steps down at its next renewal and campaigns again', async () => {
    const s = setup(['a']);
    const a = s.replicas[0]!;
    a.elector.start();
    await s.run(50);
    const e = await s.kv.get(KEY);
    await s.kv.update(KEY, JSON.stringify({ holderIdentity: 'intruder', leaseDurationMs, acquireTime: '', renewTime: '', leaderTransitions: 1 }), e?.revision ?? 0);
    await s.run(retryPeriodMs + 50);
    assert.equal(a.elector.isLeader, false);
    assert.match(String(a.log.at(-1)?.[2]), /taken by another replica/);
    // The intruder never renews: after a lease duration a leads again, in a new term.
    await s.run(leaseDurationMs + retryPeriodMs);
    assert.deepEqual(a.log.map((l) => l[1]), ['start', 'stop', 'start']);
    assert.ok(Number(a.log[2]?.[2]) > Number(a.log[0]?.[2]));
  });

  it('compare-and-set races: of candidates starting together, or taking over one expired lease together, exactly one wins', async () => {
    const s = setup(['a', 'b', 'c']);
    for (const r of s.replicas) r.elector.start();
    await s.run(1000, 1);
    assert.equal(s.leaders().length, 1);
    const first = s.leaders()[0];
    const leader = s.replicas.find((r) => r.id === first)!;
    kill(leader);
    await s.run(6000, 1);
    assert.equal(s.leaders().length, 1);
    assert.notEqual(s.leaders()[0], first);
    const starts = s.replicas.flatMap((r) => r.log.filter((l) => l[1] === 'start'));
    assert.equal(starts.length, 2, JSON.stringify(starts));
  });

  it('stop() releases the lease after the leader stopped acting: the standby leads within a retry period', async () => {
    const s = setup();
    await withLeaderA(s);
    const [a, b] = s.replicas as [Replica, Replica];
    let releasedWhileActing = false;
    a.elector.subscribe({
      onStartedLeading: () => undefined,
      onStoppedLeading: async () => {
        await Promise.resolve();
        releasedWhileActing = s.kv.text(KEY) === undefined;
      },
    });
    const stoppedAt = s.at();
    await a.elector.stop();
    assert.equal(releasedWhileActing, false);
    assert.equal(s.kv.text(KEY), undefined, 'the lease is deleted');
    assert.deepEqual(a.log.map((l) => l[1]), ['start', 'stop']);
    await s.run(retryPeriodMs + 50, 10);
    const started = b.log.find((l) => l[1] === 'start');
    assert.ok(started && started[0] - stoppedAt <= retryPeriodMs + 10, JSON.stringify(b.log));
    // A stopped elector never campaigns again.
    await s.run(10_000);
    assert.deepEqual(a.log.map((l) => l[1]), ['start', 'stop']);
  });

  it('a restarted process with the dead leader\'s INSTANCE_ID is a new candidate: the standby that was running leads first', async () => {
    // Issue 28 item 13: a launcher restarts the killed leader under its INSTANCE_ID within a second; it must not
    // take the lease at once, before the standby that heard what the leader missed.
    const s = setup(['a', 'b']);
    await withLeaderA(s);
    const [a, b] = s.replicas as [Replica, Replica];
    const killedAt = s.at();
    kill(a);
    await s.run(500);
    const again = new LeaderElector(new KvLeaderLeaseStore(s.kv, NODE, SERVICE), s.clock, silentLogger(), { identity: 'a', leaseDurationMs, renewDeadlineMs, retryPeriodMs });
    again.start();
    await s.run(200);
    assert.equal(again.isLeader, false, 'the restarted process waits for the lease like any standby');
    await s.run(leaseDurationMs + retryPeriodMs);
    assert.equal(b.elector.isLeader, true, 'the standby leads');
    assert.equal(again.isLeader, false);
    const started = b.log.find((l) => l[1] === 'start');
    assert.ok(started && started[0] - killedAt <= leaseDurationMs + retryPeriodMs + 50, JSON.stringify(b.log));
    assert.equal(s.record()?.leaderTransitions, 1);
    await again.stop(0);
  });

  it('a restarted process alone takes the lease once it expires (no standby: a lease duration, not at once)', async () => {
    const s = setup(['a']);
    const [a] = s.replicas as [Replica];
    a.elector.start();
    await s.run(100);
    kill(a);
    const again = new LeaderElector(new KvLeaderLeaseStore(s.kv, NODE, SERVICE), s.clock, silentLogger(), { identity: 'a', leaseDurationMs, renewDeadlineMs, retryPeriodMs });
    const restartedAt = s.at();
    again.start();
    await s.run(leaseDurationMs - retryPeriodMs);
    assert.equal(again.isLeader, false);
    await s.run(2 * retryPeriodMs + 100);
    assert.equal(again.isLeader, true);
    assert.ok(s.at() - restartedAt >= leaseDurationMs);
    assert.equal(s.record()?.holderIncarnation, again.incarnation);
    await again.stop(0);
  });

  const bad = [
    { name: 'a renew deadline as long as the lease', o: { leaseDurationMs: 4000, renewDeadlineMs: 4000, retryPeriodMs: 500 }, why: /renew deadline/ },
    { name: 'a retry period as long as the renew deadline', o: { leaseDurationMs: 4000, renewDeadlineMs: 1000, retryPeriodMs: 1000 }, why: /retry period/ },
  ];
  for (const tc of bad) {
    it(`refuses ${tc.name}`, () => {
      assert.match(leaderElectionProblem(tc.o) ?? '', tc.why);
      assert.throws(() => new LeaderElector(new KvLeaderLeaseStore(new FakeKv(), NODE, SERVICE), new FakeClock(), silentLogger(), { identity: 'a', ...tc.o }), tc.why);
    });
  }
  it('accepts the defaults', () => assert.equal(leaderElectionProblem(DEFAULT_LEADER_ELECTION), undefined));
});

describe('FencingTokenFilter', () => {
  it('drops what a deposed leader sends once the new leader was heard, and lets untokened messages through', async () => {
    const clock = new FakeClock();
    const filter = new FencingTokenFilter(clock, 30_000);
    assert.deepEqual(filter.accept(7), { ok: true });
    assert.deepEqual(filter.accept(7), { ok: true });
    assert.deepEqual(filter.accept(12), { ok: true }, 'a new term');
    assert.deepEqual(filter.accept(7), { ok: false, highest: 12 }, 'the deposed leader, late');
    assert.deepEqual(filter.accept(undefined), { ok: true });
    await clock.step(29_000);
    assert.deepEqual(filter.accept(7), { ok: false, highest: 12 });
    assert.deepEqual(filter.accept(12), { ok: true });
  });

  it('takes a lower token long after the highest was last seen as a new start (the leases bucket made again)', async () => {
    const clock = new FakeClock();
    const filter = new FencingTokenFilter(clock, 30_000);
    filter.accept(500);
    await clock.step(30_000);
    assert.deepEqual(filter.accept(3), { ok: true });
    assert.deepEqual(filter.accept(500 - 1), { ok: true }, 'still higher than 3');
    assert.deepEqual(filter.accept(3), { ok: false, highest: 499 });
  });
});
