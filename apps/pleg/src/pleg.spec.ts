import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { ContainerEventsStatusMessage, PodCacheEntry, PodCacheGlobal, PodLifecycleEventMessage } from '@app/contracts';
import { CriError, type Container, type PodSandbox } from '@app/cri';
import { FakeCri } from '@app/cri/testing';
import { currentTrace } from '@app/tracing';
import { silentLogger } from '@app/observability';
import { plegHealth } from '@app/kube';
import { MemoryPodCache } from '@app/pod-cache';
import { generateEvents, groupByPod, type PlegContainerState } from './events.js';
import { GenericPleg } from './generic-pleg.js';
import { PlegRunner, type PlegMode } from './pleg-runner.js';
import { PlegEventSink, PlegModeReporter, PodCacheStore } from './ports.js';

describe('generateEvents: old state -> new state', () => {
  const cases: { old: PlegContainerState; now: PlegContainerState; want: string[] }[] = [
    { old: 'non-existent', now: 'running', want: ['ContainerStarted'] },
    { old: 'running', now: 'running', want: [] },
    { old: 'running', now: 'exited', want: ['ContainerDied'] },
    { old: 'unknown', now: 'exited', want: ['ContainerDied'] },
    { old: 'exited', now: 'running', want: ['ContainerStarted'] },
    { old: 'running', now: 'unknown', want: ['ContainerChanged'] },
    { old: 'exited', now: 'non-existent', want: ['ContainerRemoved'] },
    { old: 'running', now: 'non-existent', want: ['ContainerDied', 'ContainerRemoved'] },
    { old: 'unknown', now: 'non-existent', want: ['ContainerDied', 'ContainerRemoved'] },
    { old: 'non-existent', now: 'exited', want: ['ContainerDied'] },
    { old: 'exited', now: 'exited', want: [] },
  ];
  for (const tc of cases) {
    it(`${tc.old} -> ${tc.now}`, () => {
      assert.deepEqual(generateEvents('pod', 'c1', tc.old, tc.now).map((e) => `${e.eventType}:${e.data ?? ''}`), tc.want.map((t) => `${t}:c1`));
    });
  }
});

/** The bucket in memory, mirrored into a MemoryPodCache as the pod workers' KvPodCache mirrors it (GetNewerThan). */
class MemoryCacheStore extends PodCacheStore {
  entries = new Map<string, PodCacheEntry>();
  global = 0;
  writes: string[] = [];
  readonly reader = new MemoryPodCache();
  load(): Promise<{ entries: PodCacheEntry[]; global: number }> {
    return Promise.resolve({ entries: [...this.entries.values()], global: this.global });
  }
  set(e: PodCacheEntry): Promise<void> {
    this.entries.set(e.uid, e);
    this.writes.push(`set:${e.uid}`);
    this.timeline.push(`${e.uid}@${e.timestamp}`);
    this.reader.set(e);
    return Promise.resolve();
  }
  delete(uid: string): Promise<void> {
    this.entries.delete(uid);
    this.writes.push(`delete:${uid}`);
    this.timeline.push(`${uid} deleted`);
    this.reader.delete(uid);
    return Promise.resolve();
  }
  /** Every entry written, as `<uid>@<timestamp>`, and every removal, in order. */
  timeline: string[] = [];
  relistThresholdMs?: number;
  /** Every `<node>.global` written, in order. */
  globals: PodCacheGlobal[] = [];
  updateGlobal(g: PodCacheGlobal): Promise<void> {
    // The same time again only with a new threshold (a shorter one after evented mode fell back) or as a heartbeat.
    assert.ok(g.timestamp >= this.global, `the cache clock went back: ${g.timestamp} < ${this.global}`);
    this.global = g.timestamp;
    this.relistThresholdMs = g.relistThresholdMs;
    this.globals.push(g);
    this.reader.updateTime(g.timestamp);
    return Promise.resolve();
  }
}

class Sink extends PlegEventSink {
  events: PodLifecycleEventMessage[] = [];
  publish(e: PodLifecycleEventMessage): boolean {
    this.events.push(e);
    return true;
  }
  take(): string[] {
    const out = this.events.map((e) => `${e.id}/${e.eventType}/${e.data ?? ''}`);
    this.events = [];
    return out;
  }
}

/** A runtime the test edits: sandboxes and containers by id, with their states. */
class Runtime {
  sandboxes = new Map<string, { uid: string; state: string }>();
  containers = new Map<string, { uid: string; state: string }>();
  hang = new Set<string>();
  /** While set, every listing fails (containerd is gone). */
  down = false;
  /** While set, PodSandboxStatus waits for it: an inspection caught between its listing and its write. */
  gate?: Promise<void>;
  cri = new FakeCri()
    .onRuntime('ListPodSandbox', () => {
      if (this.down) throw new CriError('Unavailable', 'connection refused');
      return { items: [...this.sandboxes].map(([id, s]) => sandbox(id, s.uid, s.state)) };
    })
    .onRuntime('ListContainers', () => ({ containers: [...this.containers].map(([id, c]) => container(id, c.uid, c.state)) }))
    .onRuntime('PodSandboxStatus', (req) => {
      const s = this.sandboxes.get(req.podSandboxId ?? '');
      const answer = () => this.sandboxStatus(req.podSandboxId ?? '', s);
      if (this.gate) return this.gate.then(answer) as never;
      return answer();
    })
    .onRuntime('ContainerStatus', (req) => {
      const c = this.containers.get(req.containerId ?? '');
      if (c && this.hang.has(c.uid)) return new Promise(() => undefined) as never;
      return { status: { id: req.containerId ?? '', state: c?.state ?? 'CONTAINER_UNKNOWN' }, info: {} } as never;
    });

  private sandboxStatus(id: string, s: { uid: string; state: string } | undefined): never {
    return { status: { id, state: s?.state ?? 'SANDBOX_NOTREADY', createdAt: '1', metadata: { name: 'p', namespace: 'd', uid: s?.uid ?? '', attempt: 0 } }, info: {}, containersStatuses: [], timestamp: '0' } as never;
  }
}

function sandbox(id: string, uid: string, state: string): PodSandbox {
  return { id, state, labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': `pod-${uid}`, 'io.kubernetes.pod.namespace': 'default' }, metadata: { name: `pod-${uid}`, namespace: 'default', uid, attempt: 0 } } as unknown as PodSandbox;
}
function container(id: string, uid: string, state: string): Container {
  return { id, podSandboxId: `sb-${uid}`, state, labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': id } } as unknown as Container;
}

function setup(cache = new MemoryCacheStore(), { relistThresholdMs = 180_000 } = {}) {
  const runtime = new Runtime();
  const sink = new Sink();
  const clock = new FakeClock(1_000_000);
  const pleg = new GenericPleg({ cri: runtime.cri, cache, sink, clock, logger: silentLogger() }, { inspectTimeoutMs: 5000, inspectConcurrency: 4, relistThresholdMs });
  return { runtime, sink, clock, pleg, cache };
}

describe('groupByPod', () => {
  it('with a node, only the pods that node\'s stack made', () => {
    const sb = (id: string, node?: string) => ({ id, state: 'SANDBOX_READY', labels: { 'io.kubernetes.pod.uid': id, ...(node ? { 'kubelet-split.io/node': node } : {}) } }) as unknown as PodSandbox;
    const all = [sb('mine', 'node-a'), sb('theirs', 'node-b'), sb('unlabelled')];
    assert.deepEqual([...groupByPod(all, [], 'node-a').keys()], ['mine']);
    assert.deepEqual([...groupByPod(all, []).keys()].sort(), ['mine', 'theirs', 'unlabelled']);
  });
});

describe('GenericPleg.relist', () => {
  it('a container started, killed and removed: ContainerStarted, ContainerDied, ContainerRemoved, and the cache follows', async () => {
    const { runtime, sink, pleg, cache } = setup();
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    await pleg.relist();
    assert.deepEqual(sink.take().sort(), ['a/ContainerStarted/c1', 'a/ContainerStarted/sb-a']);
    assert.equal((cache.entries.get('a')?.containerStatuses[0] as { state: string }).state, 'CONTAINER_RUNNING');
    await pleg.relist();
    assert.deepEqual(sink.take(), [], 'nothing changed, nothing sent');
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_EXITED' });
    await pleg.relist();
    assert.deepEqual(sink.take(), ['a/ContainerDied/c1']);
    runtime.containers.delete('c1');
    await pleg.relist();
    assert.deepEqual(sink.take(), ['a/ContainerRemoved/c1']);
    runtime.sandboxes.delete('sb-a');
    await pleg.relist();
    assert.deepEqual(sink.take(), ['a/ContainerDied/sb-a', 'a/ContainerRemoved/sb-a']);
    assert.equal(cache.entries.has('a'), false, 'a pod gone from the runtime is gone from the cache');
  });

  it('each changed pod is a hop of its own trace: its cache write and its events carry its UID (so they are recorded), the relist\'s listing none', async () => {
    const cache = new MemoryCacheStore();
    const seen: string[] = [];
    const set = cache.set.bind(cache);
    cache.set = (e) => {
      seen.push(`set:${e.uid} in ${currentTrace()?.podUid ?? 'no trace'}`);
      return set(e);
    };
    const { runtime, sink, pleg } = setup(cache);
    const publish = sink.publish.bind(sink);
    const traceOf = new Map<string, string>();
    sink.publish = (e) => {
      seen.push(`event:${e.id} in ${currentTrace()?.podUid ?? 'no trace'}`);
      const t = currentTrace()?.trace.traceId ?? '';
      assert.ok(!traceOf.has(e.id) || traceOf.get(e.id) === t, 'one trace per pod');
      traceOf.set(e.id, t);
      return publish(e);
    };
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    runtime.containers.set('c2', { uid: 'b', state: 'CONTAINER_RUNNING' });
    await pleg.relist();
    assert.deepEqual(seen.sort(), ['event:a in a', 'event:b in b', 'set:a in a', 'set:b in b']);
    assert.notEqual(traceOf.get('a'), traceOf.get('b'), 'pods do not share a trace');
    assert.equal(currentTrace(), undefined, 'nothing leaks out of the relist');
  });

  it('only changed pods are inspected; every relist advances the cache clock', async () => {
    const { runtime, pleg, cache, clock } = setup();
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    runtime.containers.set('c2', { uid: 'b', state: 'CONTAINER_RUNNING' });
    await pleg.relist();
    cache.writes = [];
    const before = cache.global;
    await clock.step(1000);
    runtime.containers.set('c2', { uid: 'b', state: 'CONTAINER_EXITED' });
    const r = await pleg.relist();
    assert.deepEqual(r.inspected, ['b']);
    assert.deepEqual(cache.writes, ['set:b']);
    assert.ok(cache.global > before);
    assert.ok((cache.entries.get('b')?.timestamp ?? 0) > (cache.entries.get('a')?.timestamp ?? 0));
  });

  it('a hanging inspection does not block the other pods, and is retried on the next relist', async () => {
    const { runtime, sink, pleg, clock, cache } = setup();
    runtime.containers.set('slow1', { uid: 'slow', state: 'CONTAINER_RUNNING' });
    runtime.containers.set('fast1', { uid: 'fast', state: 'CONTAINER_RUNNING' });
    runtime.hang.add('slow');
    const relisting = pleg.relist();
    await clock.step(5000);
    const r = await relisting;
    assert.deepEqual(r.failed, ['slow']);
    assert.deepEqual(r.inspected, ['fast']);
    assert.deepEqual(sink.take(), ['fast/ContainerStarted/fast1'], 'the slow pod\'s events wait for a good inspection');
    assert.ok(cache.global > 0, 'the relist still completed');
    runtime.hang.delete('slow');
    const again = await pleg.relist();
    assert.deepEqual(again.inspected, ['slow']);
    assert.deepEqual(sink.take(), ['slow/ContainerStarted/slow1']);
  });

  it('health turns false after the threshold without a relist, and true after one', async () => {
    const { pleg, clock, runtime } = setup();
    await pleg.relist();
    assert.equal(pleg.healthy().ok, true);
    await clock.step(180_001);
    assert.equal(pleg.healthy().ok, false);
    assert.match(pleg.healthy().detail, /pleg was last seen active 180s ago; threshold is 180s/);
    runtime.cri.failNext('runtime', 'ListPodSandbox', 'Unavailable');
    await assert.rejects(pleg.relist());
    assert.equal(pleg.healthy().ok, false, 'a failed relist does not count');
    await pleg.relist();
    assert.equal(pleg.healthy().ok, true);
  });

  it('each successful relist writes its time and the health threshold to the cache, for the sync loop\'s gate; a failing relist says why', async () => {
    const { pleg, clock, runtime, cache } = setup();
    await pleg.relist();
    assert.equal(cache.relistThresholdMs, 180_000);
    const written = cache.global;
    await clock.step(5000);
    runtime.cri.failNext('runtime', 'ListPodSandbox', 'Unavailable');
    await assert.rejects(pleg.relist());
    assert.equal(cache.global, written, 'a failed relist does not advance the cache');
    assert.match(pleg.healthy().detail, /last relist 5000ms ago; relist failing: .+/);
    await pleg.relist();
    assert.doesNotMatch(pleg.healthy().detail, /failing/);
  });

  it('a restarted PLEG rebuilds its view from the cache and does not replay old events', async () => {
    const cache = new MemoryCacheStore();
    const first = setup(cache);
    first.runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    first.runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    first.runtime.containers.set('c2', { uid: 'a', state: 'CONTAINER_RUNNING' });
    await first.pleg.relist();
    const second = setup(cache);
    second.runtime.sandboxes = first.runtime.sandboxes;
    second.runtime.containers = new Map(first.runtime.containers);
    second.runtime.containers.set('c2', { uid: 'a', state: 'CONTAINER_EXITED' }); // changed while the PLEG was down
    assert.equal(await second.pleg.restore(), 1);
    await second.pleg.relist();
    assert.deepEqual(second.sink.take(), ['a/ContainerDied/c2']);
  });
});

/** A promise the test resolves when it wants. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

/** The timestamps each pod's entries were written with, in order, must never go back. */
function assertMonotonic(timeline: string[]): void {
  const last = new Map<string, number>();
  for (const w of timeline) {
    const [uid, at] = w.split('@');
    if (at === undefined || uid === undefined) continue;
    assert.ok(Number(at) >= (last.get(uid) ?? 0), `pod ${uid}'s cache entry went back in time: ${timeline.join(', ')}`);
    last.set(uid, Number(at));
  }
}

describe('GenericPleg.inspectPod: one pod inspected at once, outside the relist', () => {
  it('a pod the runtime has nothing of (not made yet, or just removed): the waiting pod worker is released at once by an empty entry, which the next relist removes', async () => {
    const { runtime, sink, pleg, cache, clock } = setup();
    await pleg.relist();
    await clock.step(100);
    const syncEnd = clock.now();
    const waiting = cache.reader.getNewerThan('new', syncEnd);
    const inspected = await pleg.inspectPod('new', syncEnd);
    assert.equal(inspected.written, true);
    const seen = await waiting;
    assert.ok(seen.timestamp > syncEnd, 'released with news newer than its sync, not at the next relist');
    assert.deepEqual([seen.entry?.sandboxStatuses, seen.entry?.containerStatuses], [[], []], 'the runtime has nothing of the pod');
    assert.deepEqual(sink.take(), []);
    // The pod appears: the next relist (or inspection) writes it; one that finds it still absent removes the entry.
    await clock.step(1000);
    await pleg.relist();
    assert.equal(cache.entries.has('new'), false, 'the relist removed the empty entry');
    await pleg.inspectPod('gone-too');
    runtime.sandboxes.set('sb-g', { uid: 'gone-too', state: 'SANDBOX_READY' });
    await clock.step(1000);
    await pleg.relist();
    assert.equal(cache.entries.get('gone-too')?.sandboxStatuses.length, 1, 'a pod made after its empty entry is written by the relist');
    assert.deepEqual(sink.take(), ['gone-too/ContainerStarted/sb-g']);
  });

  it('a relist result older than an immediate inspection arrives after it: the cache keeps the newer one, and each event is sent once', async () => {
    const { runtime, sink, pleg, cache, clock } = setup();
    // The pod worker made the sandbox; a relist lists it and is caught inspecting it.
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    const held = gate();
    runtime.gate = held.wait;
    const relisting = pleg.relist();
    await clock.step(0);
    runtime.gate = undefined;
    // Meanwhile the pod worker starts the container, its sync ends, and it asks for the pod's inspection.
    await clock.step(150);
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    const syncEnd = clock.now();
    const waiting = cache.reader.getNewerThan('a', syncEnd);
    const inspected = await pleg.inspectPod('a', syncEnd);
    assert.equal(inspected.written, true);
    assert.ok(inspected.timestamp > syncEnd, 'the entry is newer than the sync that asked for it');
    const seen = await waiting;
    assert.equal(seen.entry?.containerStatuses.length, 1, 'GetNewerThan releases the pod worker with the started container');
    assert.deepEqual(sink.take().sort(), ['a/ContainerStarted/c1', 'a/ContainerStarted/sb-a']);

    // The relist's older view (the sandbox, no container) comes last.
    held.open();
    const relisted = await relisting;
    assert.deepEqual(relisted.inspected, ['a']);
    assert.deepEqual(relisted.events, [], 'the relist sends nothing the inspection already sent, nor the older view');
    assert.deepEqual(sink.take(), []);
    const entry = cache.entries.get('a');
    assert.equal(entry?.timestamp, inspected.timestamp, 'the cache keeps the newer entry');
    assert.deepEqual(entry?.containerStatuses.map((c) => (c as { id: string }).id), ['c1']);
    assert.deepEqual(cache.timeline, [`a@${inspected.timestamp}`], 'the older view was never written');
    assert.equal(cache.reader.get('a').entry?.timestamp, inspected.timestamp);

    // The next relist sees nothing new.
    await clock.step(1000);
    await pleg.relist();
    assert.deepEqual(sink.take(), []);
    assertMonotonic(cache.timeline);
  });

  it('a relist newer than an inspection that is still running wins; the inspection\'s older view is dropped', async () => {
    const { runtime, sink, pleg, cache, clock } = setup();
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    await pleg.relist();
    sink.take();
    const held = gate();
    runtime.gate = held.wait;
    const inspecting = pleg.inspectPod('a', clock.now());
    await clock.step(0);
    runtime.gate = undefined;
    await clock.step(1000);
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_EXITED' });
    await pleg.relist();
    assert.deepEqual(sink.take(), ['a/ContainerDied/c1']);
    held.open();
    const late = await inspecting;
    assert.equal(late.written, false);
    assert.deepEqual(late.events, []);
    assert.equal((cache.entries.get('a')?.containerStatuses[0] as { state: string }).state, 'CONTAINER_EXITED', 'the exited container stays in the cache');
    assertMonotonic(cache.timeline);
  });

  it('the entry is stamped after the sync that asked, even within the same millisecond; a sync end ahead of the PLEG\'s clock is not trusted', async () => {
    const { runtime, pleg, clock } = setup();
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    const now = clock.now();
    assert.equal((await pleg.inspectPod('a', now)).timestamp, now + 1, 'a sync that ended this millisecond');
    const ahead = await pleg.inspectPod('a', now + 60_000);
    assert.ok(ahead.timestamp < now + 60_000, 'a clock a minute ahead does not push the cache a minute ahead: the next relist releases that worker');
  });

  it('a pod the runtime no longer has is removed at once, and an older relist does not bring it back', async () => {
    const { runtime, sink, pleg, cache, clock } = setup();
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    await pleg.relist();
    sink.take();
    // The pod worker killed the pod; a relist lists it stopped and is caught inspecting it.
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_NOTREADY' });
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_EXITED' });
    const held = gate();
    runtime.gate = held.wait;
    const relisting = pleg.relist();
    await clock.step(0);
    runtime.gate = undefined;
    // syncTerminatedPod removes the sandbox (and its container) and asks for the pod's inspection.
    runtime.sandboxes.delete('sb-a');
    runtime.containers.delete('c1');
    await clock.step(100);
    const gone = await pleg.inspectPod('a', clock.now());
    assert.equal(gone.written, true);
    assert.deepEqual(gone.events.map((e) => `${e.eventType}/${e.data ?? ''}`).sort(), ['ContainerDied/c1', 'ContainerDied/sb-a', 'ContainerRemoved/c1', 'ContainerRemoved/sb-a']);
    const empty = (uid: string) => cache.entries.get(uid)?.sandboxStatuses.length === 0 && cache.entries.get(uid)?.containerStatuses.length === 0;
    assert.ok(empty('a'), 'an empty entry: the runtime has nothing of the pod');
    assert.equal(sink.take().length, 4);
    held.open();
    const relisted = await relisting;
    assert.deepEqual(relisted.events, []);
    assert.ok(empty('a'), 'the relist that listed the stopped pod before it was removed does not write it again');
    assert.deepEqual(cache.timeline.slice(-1), [`a@${gone.timestamp}`]);
    await clock.step(1000);
    await pleg.relist();
    assert.deepEqual(cache.timeline.slice(-1), ['a deleted'], 'the next relist removes the empty entry');
    assert.deepEqual(sink.take(), [], 'each event once');
  });

  it('asks the runtime for that pod only', async () => {
    const { runtime, pleg } = setup();
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    runtime.sandboxes.set('sb-b', { uid: 'b', state: 'SANDBOX_READY' });
    runtime.containers.set('c-b', { uid: 'b', state: 'CONTAINER_RUNNING' });
    const r = await pleg.inspectPod('a');
    assert.deepEqual(r.events.map((e) => `${e.id}/${e.eventType}/${e.data ?? ''}`), ['a/ContainerStarted/sb-a']);
    for (const m of ['ListPodSandbox', 'ListContainers']) {
      assert.deepEqual(runtime.cri.callsOf(m), [{ filter: { labelSelector: { 'io.kubernetes.pod.uid': 'a' } } }], `${m} filtered by the pod's UID label`);
    }
    assert.deepEqual(runtime.cri.callsOf('ContainerStatus'), [], 'the other pod is not inspected');
  });

  it('a runtime that cannot be read rejects; the pod is left to the next relist', async () => {
    const { runtime, pleg, cache, sink } = setup();
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    runtime.cri.failNext('runtime', 'ListContainers', 'Unavailable');
    await assert.rejects(pleg.inspectPod('a'));
    assert.equal(cache.entries.size, 0);
    await pleg.relist();
    assert.deepEqual(sink.take(), ['a/ContainerStarted/sb-a']);
  });
});

/** What the runner told of its mode: each fallback (with whether it was a fault), each connection, each latency. */
class Reporter extends PlegModeReporter {
  told: string[] = [];
  latencies: number[] = [];
  connected(resumed: boolean): void {
    this.told.push(resumed ? 'resumed' : 'connected');
  }
  fellBack(reason: string, fault: boolean): void {
    this.told.push(`${fault ? 'fault' : 'fell back'}: ${reason}`);
  }
  latency(seconds: number): void {
    this.latencies.push(seconds);
  }
}

const STATUS = 'kubelet.v1.container_events_status' as const;
const streaming = (stream = 'gw-1'): ContainerEventsStatusMessage => ({ type: STATUS, state: 'streaming', detail: '', stream });

describe('PlegRunner', () => {
  /** A PLEG and its runner, relisting every second in generic mode and every 5 minutes in evented mode, falling back after 90s of relay silence. */
  const setupRunner = (mode: PlegMode, askRelay?: () => Promise<ContainerEventsStatusMessage | undefined>) => {
    const s = setup();
    const reporter = new Reporter();
    const runner = new PlegRunner({ pleg: s.pleg, clock: s.clock, logger: silentLogger(), askRelay, reporter }, { relistPeriodMs: 1000, eventedRelistPeriodMs: 300_000, eventedSilenceMs: 90_000 }, mode);
    /** A container event as containerd sends it, made `agoMs` before now by the runtime's clock, carrying what the runtime said then. */
    const event = (uid: string, containerId: string, type: string, state: string, agoMs = 0) => ({
      containerId,
      containerEventType: type,
      createdAt: String(BigInt(s.clock.now() - agoMs) * 1_000_000n),
      podSandboxStatus: { id: `sb-${uid}`, state: 'SANDBOX_READY', createdAt: '1', metadata: { name: uid, namespace: 'default', uid, attempt: 0 } },
      containersStatuses: [{ id: containerId, state }],
    });
    /** How many relists have run: each one advances the cache's clock. */
    const relists = () => s.cache.global;
    return { ...s, runner, reporter, event, relists };
  };

  it('relists every period in generic mode', async () => {
    const { clock, cache, runner } = setupRunner('generic');
    runner.start();
    await clock.step(0);
    const t1 = cache.global;
    await clock.step(1000);
    assert.ok(cache.global > t1);
    runner.stop();
  });

  it('evented mode: an event makes the PLEG read that pod from the runtime; the entry has the PLEG\'s own time, and each lifecycle event is sent once', async () => {
    const { clock, cache, sink, runtime, runner, reporter, event } = setupRunner('evented', () => Promise.resolve(streaming()));
    runner.start();
    await clock.step(0);
    const afterFirstRelist = cache.global;
    await clock.step(5000);
    assert.equal(cache.global, afterFirstRelist, 'no relist every second in evented mode');
    runtime.sandboxes.set('sb-z', { uid: 'z', state: 'SANDBOX_READY' });
    runtime.containers.set('c9', { uid: 'z', state: 'CONTAINER_RUNNING' });
    await runner.onRuntimeMessage(event('z', 'c9', 'CONTAINER_STARTED_EVENT', 'CONTAINER_RUNNING', 40));
    assert.deepEqual(sink.take().sort(), ['z/ContainerStarted/c9', 'z/ContainerStarted/sb-z']);
    assert.ok((cache.entries.get('z')?.timestamp ?? 0) > afterFirstRelist);
    assert.deepEqual(reporter.latencies, [0.04]);
    await runner.onRuntimeMessage(event('z', 'c9', 'CONTAINER_STARTED_EVENT', 'CONTAINER_RUNNING'));
    assert.deepEqual(sink.take(), [], 'the same state again: no event');
    runtime.containers.set('c9', { uid: 'z', state: 'CONTAINER_EXITED' });
    await runner.onRuntimeMessage(event('z', 'c9', 'CONTAINER_STOPPED_EVENT', 'CONTAINER_EXITED'));
    assert.deepEqual(sink.take(), ['z/ContainerDied/c9']);
    runtime.containers.delete('c9');
    await runner.onRuntimeMessage(event('z', 'c9', 'CONTAINER_DELETED_EVENT', 'CONTAINER_EXITED'));
    assert.deepEqual(sink.take(), ['z/ContainerRemoved/c9']);
    runtime.sandboxes.delete('sb-z');
    await runner.onRuntimeMessage(event('z', 'sb-z', 'CONTAINER_DELETED_EVENT', 'CONTAINER_EXITED'));
    assert.deepEqual([cache.entries.get('z')?.sandboxStatuses, cache.entries.get('z')?.containerStatuses], [[], []], 'the sandbox deleted: the runtime has nothing of the pod (an empty entry until the next relist)');
    assert.deepEqual(reporter.told, ['connected']);
    runner.stop();
  });

  it('an event for an older state arriving after a newer inspection does not go back in time', async () => {
    const { clock, cache, sink, runtime, runner, event } = setupRunner('evented', () => Promise.resolve(streaming()));
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    runner.start();
    await clock.step(0);
    sink.take();
    // The container started and then exited; a pod worker's inspection saw it exited.
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_EXITED' });
    await runner.onInspectRequest({ type: 'kubelet.v1.inspect_pod', podUid: 'a', syncEnd: clock.now() });
    assert.deepEqual(sink.take(), ['a/ContainerDied/c1']);
    const inspected = cache.entries.get('a')!;
    // Only now does the event for its start arrive, saying "running".
    await runner.onRuntimeMessage(event('a', 'c1', 'CONTAINER_STARTED_EVENT', 'CONTAINER_RUNNING', 500));
    const after = cache.entries.get('a')!;
    assert.equal((after.containerStatuses[0] as { state?: string } | undefined)?.state, 'CONTAINER_EXITED', 'the cache still says exited');
    assert.ok(after.timestamp >= inspected.timestamp, 'and its time did not go back');
    assert.deepEqual(sink.take(), [], 'no ContainerStarted for a container that has exited');
    runner.stop();
  });

  it('events for a pod already being read are folded into one more read, which comes after the last of them', async () => {
    const { clock, runtime, runner, event } = setupRunner('evented', () => Promise.resolve(streaming()));
    runtime.sandboxes.set('sb-b', { uid: 'b', state: 'SANDBOX_READY' });
    runner.start();
    await clock.step(0);
    let reads = 0;
    let release!: () => void;
    runtime.gate = new Promise((r) => (release = r));
    runtime.cri.onRuntime('ListContainers', () => {
      reads++;
      return { containers: [...runtime.containers].map(([id, c]) => container(id, c.uid, c.state)) };
    });
    const first = runner.onRuntimeMessage(event('b', 'c1', 'CONTAINER_CREATED_EVENT', 'CONTAINER_CREATED'));
    await clock.step(0);
    for (let i = 0; i < 5; i++) await runner.onRuntimeMessage(event('b', 'c1', 'CONTAINER_STARTED_EVENT', 'CONTAINER_RUNNING'));
    runtime.gate = undefined;
    release();
    await first;
    assert.equal(reads, 2, 'six events, two reads');
    runner.stop();
  });

  it('a broken stream falls back to the 1s relist at once; once the relay has streamed for 30s the events are used again, with a relist at once; both are told', async () => {
    const { clock, cache, runner, reporter, relists } = setupRunner('evented', () => Promise.resolve(streaming()));
    runner.start();
    await clock.step(0);
    await runner.onRuntimeMessage({ type: STATUS, state: 'reconnecting', detail: 'Unavailable: connection refused' });
    assert.equal(runner.mode.effective, 'generic');
    assert.match(runner.mode.fallbackReason ?? '', /stream broke: Unavailable: connection refused/);
    let t = relists();
    await clock.step(1000);
    assert.ok(relists() > t, 'relisting every second');
    await runner.onRuntimeMessage(streaming('gw-2'));
    await clock.step(29_000);
    assert.equal(runner.mode.effective, 'generic', 'not before 30s of streaming');
    await clock.step(1000);
    assert.equal(runner.mode.effective, 'evented');
    assert.equal(cache.relistThresholdMs, 600_000, 'a relist at once on the return, in evented mode (its threshold written)');
    t = relists();
    await clock.step(5000);
    assert.equal(relists(), t, 'then every 5 minutes again');
    assert.deepEqual(reporter.told, ['connected', 'fault: the container event stream broke: Unavailable: connection refused', 'resumed']);
    runner.stop();
  });

  it('a relay that stops streaming before the 30s are up starts the wait over; a fallback soon after a return waits twice as long', async () => {
    const { clock, runner } = setupRunner('evented', () => Promise.resolve(streaming()));
    runner.start();
    await clock.step(0);
    await runner.onRuntimeMessage({ type: STATUS, state: 'stopped', detail: '' });
    assert.match(runner.mode.fallbackReason ?? '', /stopped/);
    await runner.onRuntimeMessage(streaming('gw-2'));
    await clock.step(20_000);
    await runner.onRuntimeMessage({ type: STATUS, state: 'reconnecting', detail: 'the stream ended' });
    await runner.onRuntimeMessage(streaming('gw-3'));
    await clock.step(20_000);
    assert.equal(runner.mode.effective, 'generic', 'the wait started over');
    await clock.step(10_000);
    assert.equal(runner.mode.effective, 'evented');
    await clock.step(60_000);
    await runner.onRuntimeMessage({ type: STATUS, state: 'reconnecting', detail: 'the stream ended' });
    await runner.onRuntimeMessage(streaming('gw-4'));
    await clock.step(30_000);
    assert.equal(runner.mode.effective, 'generic', 'a second fallback within 5 minutes of a return: 60s');
    await clock.step(30_000);
    assert.equal(runner.mode.effective, 'evented');
    runner.stop();
  });

  it('events that arrive long after the runtime made them (a lagging stream) make it fall back', async () => {
    const { clock, sink, runtime, runner, reporter, event } = setupRunner('evented', () => Promise.resolve(streaming()));
    runtime.sandboxes.set('sb-l', { uid: 'l', state: 'SANDBOX_READY' });
    runner.start();
    await clock.step(0);
    sink.take();
    runtime.containers.set('c1', { uid: 'l', state: 'CONTAINER_RUNNING' });
    await runner.onRuntimeMessage(event('l', 'c1', 'CONTAINER_STARTED_EVENT', 'CONTAINER_RUNNING', 12_000));
    assert.equal(runner.mode.effective, 'generic');
    assert.match(runner.mode.fallbackReason ?? '', /container events arrive 12s after the runtime made them/);
    assert.match(reporter.told.at(-1) ?? '', /^fault: /);
    await clock.step(0);
    assert.deepEqual(sink.take(), ['l/ContainerStarted/c1'], 'the relist that follows at once sees the container');
    runner.stop();
  });

  it('a new stream seen while evented (a restarted cri-gateway, whose stream this PLEG never saw break) means a relist at once', async () => {
    const { clock, runner, relists } = setupRunner('evented', () => Promise.resolve(streaming('gw-1')));
    runner.start();
    await clock.step(0);
    await runner.onRuntimeMessage(streaming('gw-1'));
    let t = relists();
    await clock.step(10_000);
    assert.equal(relists(), t, 'the same stream: no relist');
    await runner.onRuntimeMessage(streaming('gw-restarted-1'));
    t = relists();
    await clock.step(0);
    assert.ok(relists() > t);
    assert.equal(runner.mode.effective, 'evented');
    runner.stop();
  });

  it('a runtime that streams no events (containerd 1.6): evented mode falls back at once, told as no fault; switching again is allowed', async () => {
    const askRelay = () => Promise.resolve({ type: STATUS, state: 'unsupported' as const, detail: 'unknown method GetContainerEvents' });
    const { clock, runner, reporter, relists } = setupRunner('generic', askRelay);
    runner.start();
    runner.setMode('evented');
    await clock.step(0);
    assert.equal(runner.mode.desired, 'evented');
    assert.equal(runner.mode.effective, 'generic');
    assert.match(runner.mode.fallbackReason ?? '', /does not stream container events/);
    assert.deepEqual(reporter.told, ['connected', 'fell back: the runtime does not stream container events: unknown method GetContainerEvents']);
    const t = relists();
    await clock.step(1000);
    assert.ok(relists() > t, 'relisting every second');
    runner.setMode('generic');
    assert.equal(runner.mode.fallbackReason, undefined);
    runner.stop();
  });

  it('evented mode relists every 5 minutes and stays healthy between relists (threshold 10m, written to the cache); generic mode is back to 3m', async () => {
    const { clock, cache, pleg, runner } = setupRunner('evented', () => Promise.resolve(streaming()));
    runner.start();
    await clock.step(0);
    assert.equal(cache.relistThresholdMs, 600_000);
    for (let t = 0; t < 290_000; t += 10_000) {
      await runner.onRuntimeMessage(streaming());
      await clock.step(10_000);
    }
    assert.equal(pleg.healthy().ok, true, pleg.healthy().detail);
    runner.setMode('generic');
    await clock.step(0);
    assert.equal(cache.relistThresholdMs, 180_000);
    runner.stop();
  });

  it('evented mode shows the sync loop\'s gate it is alive between its rare relists, without moving the cache\'s time; a PLEG that stops is unhealthy to the gate within RELIST_THRESHOLD', async () => {
    const { clock, cache, runner } = setupRunner('evented', () => Promise.resolve(streaming()));
    runner.start();
    await clock.step(0);
    const relisted = cache.global;
    const writes = cache.globals.length;
    for (let t = 0; t < 290_000; t += 10_000) {
      await runner.onRuntimeMessage(streaming());
      await clock.step(10_000);
      const last = cache.globals.at(-1);
      assert.equal(plegHealth(last, clock.now()), undefined, `healthy to the gate at ${t / 1000}s`);
    }
    assert.equal(cache.global, relisted, 'no relist, and the heartbeats leave the cache\'s time where it was (no pod worker released)');
    assert.ok(cache.globals.length - writes >= 28, `a heartbeat every 10 s: ${cache.globals.length - writes} writes in 290 s`);
    assert.deepEqual(cache.globals.at(-1), { timestamp: relisted, relistThresholdMs: 600_000, aliveAt: clock.now(), aliveThresholdMs: 180_000 });
    runner.stop(); // the PLEG is gone
    const last = cache.globals.at(-1);
    assert.equal(plegHealth(last, clock.now() + 180_000), undefined);
    assert.match(plegHealth(last, clock.now() + 181_000) ?? '', /last seen active 181s ago; threshold is 180s/, 'unhealthy after RELIST_THRESHOLD, not the 10-minute evented threshold');
  });

  it('the heartbeat comes often enough for a short RELIST_THRESHOLD: a third of it, at least a second', () => {
    const period = (relistThresholdMs: number) => setup(undefined, { relistThresholdMs }).pleg.heartbeatPeriodMs;
    assert.equal(period(180_000), 10_000);
    assert.equal(period(5000), 1666);
    assert.equal(period(1000), 1000);
  });

  it('falling back from evented mode, the shorter threshold counts from the fallback: health and the gate hold while the relist at once runs, and trip after 3m of failing relists', async () => {
    const { clock, cache, pleg, runner, runtime } = setupRunner('evented', () => Promise.resolve(streaming()));
    runner.start();
    await clock.step(0);
    const relisted = cache.global;
    for (let t = 0; t < 250_000; t += 10_000) {
      await runner.onRuntimeMessage(streaming());
      await clock.step(10_000);
    }
    // containerd goes away: the relay says so, and every relist fails from now on.
    runtime.down = true;
    await runner.onRuntimeMessage({ ...streaming(), state: 'reconnecting', detail: 'connection refused' });
    await clock.step(0);
    assert.equal(runner.mode.effective, 'generic');
    assert.equal(pleg.healthy().ok, true, `not unhealthy at once for a relist 250s old: ${pleg.healthy().detail}`);
    assert.equal(cache.global, relisted, 'the cache\'s time stays that of the last relist');
    const gateThreshold = cache.relistThresholdMs ?? 0;
    assert.equal(clock.now() - relisted + 180_000, gateThreshold, 'the gate gets 3m from the fallback');
    await clock.step(179_000);
    assert.equal(pleg.healthy().ok, true, pleg.healthy().detail);
    await clock.step(2000);
    assert.equal(pleg.healthy().ok, false, 'failing relists for 3m: unhealthy');
    assert.ok(clock.now() - cache.global > gateThreshold, 'and past the gate\'s threshold');
    runner.stop();
  });

  it('a fallback while the evented relist at start is still running: relisting every second after it, not 5 minutes later', async () => {
    const { clock, runner, runtime, relists } = setupRunner('evented');
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    const held = gate();
    runtime.gate = held.wait;
    runner.start();
    await clock.step(0);
    // The relay says the runtime has no stream (containerd 1.6) while the first relist waits on the runtime.
    await runner.onRuntimeMessage({ type: STATUS, state: 'unsupported', detail: 'unknown method GetContainerEvents' });
    runtime.gate = undefined;
    held.open();
    await clock.step(0);
    assert.equal(runner.mode.effective, 'generic');
    const t = relists();
    await clock.step(1000);
    await clock.step(1000);
    assert.ok(relists() > t, 'relisting every second');
    runner.stop();
  });

  it('evented mode started before the runtime answers (cri-gateway not up yet): the failed relist is retried every second until one succeeds, then relists are 5 minutes apart again', async () => {
    const { clock, runner, runtime, relists } = setupRunner('evented', () => Promise.resolve(streaming()));
    runtime.down = true;
    runner.start();
    await clock.step(0);
    assert.equal(relists(), 0, 'no relist has succeeded');
    await clock.step(1000);
    await clock.step(1000);
    assert.equal(relists(), 0);
    runtime.down = false;
    await clock.step(1000);
    const first = relists();
    assert.ok(first > 0, 'retried within a second of the runtime answering, not 5 minutes later');
    for (let t = 0; t < 60_000; t += 10_000) {
      await runner.onRuntimeMessage(streaming());
      await clock.step(10_000);
    }
    assert.equal(relists(), first, 'evented again: no relist for a minute');
    runner.stop();
  });

  it('an inspection a pod worker asks for is made by the leader in either mode, and ignored by a standby', async () => {
    const { clock, sink, runtime, runner } = setupRunner('evented');
    runtime.sandboxes.set('sb-a', { uid: 'a', state: 'SANDBOX_READY' });
    const ask = { type: 'kubelet.v1.inspect_pod' as const, podUid: 'a', syncEnd: clock.now() };
    await runner.onInspectRequest(ask);
    assert.deepEqual(sink.take(), [], 'a standby (stopped) does not inspect');
    runner.start();
    await clock.step(0);
    sink.take();
    runtime.containers.set('c1', { uid: 'a', state: 'CONTAINER_RUNNING' });
    await runner.onInspectRequest({ ...ask, syncEnd: clock.now() });
    assert.deepEqual(sink.take(), ['a/ContainerStarted/c1'], 'evented mode, between its rare relists');
    runtime.cri.failNext('runtime', 'ListPodSandbox', 'Unavailable');
    await runner.onInspectRequest(ask); // logged, not thrown: the relist is the safety net
    runner.stop();
  });

  it('evented mode falls back when the relay is silent', async () => {
    const { clock, runner, reporter } = setupRunner('evented');
    runner.start();
    await clock.step(80_000);
    assert.equal(runner.mode.effective, 'evented');
    await clock.step(20_000);
    assert.equal(runner.mode.effective, 'generic');
    assert.match(runner.mode.fallbackReason ?? '', /no word from the container event relay/);
    assert.match(reporter.told.at(-1) ?? '', /^fault: no word/);
    runner.stop();
  });
});
