import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { ContainerEventsStatusMessage, PodCacheEntry, PodLifecycleEventMessage } from '@app/contracts';
import type { Container, PodSandbox } from '@app/cri';
import { FakeCri } from '@app/cri/testing';
import { currentTrace } from '@app/nats';
import { silentLogger } from '@app/observability';
import { generateEvents, groupByPod, type PlegContainerState } from './events.js';
import { GenericPleg } from './generic-pleg.js';
import { PlegRunner, type PlegMode } from './pleg-runner.js';
import { PlegEventSink, PodCacheStore } from './ports.js';

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

class MemoryCacheStore extends PodCacheStore {
  entries = new Map<string, PodCacheEntry>();
  global = 0;
  writes: string[] = [];
  load(): Promise<{ entries: PodCacheEntry[]; global: number }> {
    return Promise.resolve({ entries: [...this.entries.values()], global: this.global });
  }
  set(e: PodCacheEntry): Promise<void> {
    this.entries.set(e.uid, e);
    this.writes.push(`set:${e.uid}`);
    return Promise.resolve();
  }
  delete(uid: string): Promise<void> {
    this.entries.delete(uid);
    this.writes.push(`delete:${uid}`);
    return Promise.resolve();
  }
  relistThresholdMs?: number;
  updateTime(t: number, relistThresholdMs?: number): Promise<void> {
    assert.ok(t > this.global, `the cache clock went back: ${t} <= ${this.global}`);
    this.global = t;
    this.relistThresholdMs = relistThresholdMs;
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
  cri = new FakeCri()
    .onRuntime('ListPodSandbox', () => ({ items: [...this.sandboxes].map(([id, s]) => sandbox(id, s.uid, s.state)) }))
    .onRuntime('ListContainers', () => ({ containers: [...this.containers].map(([id, c]) => container(id, c.uid, c.state)) }))
    .onRuntime('PodSandboxStatus', (req) => {
      const s = this.sandboxes.get(req.podSandboxId ?? '');
      return { status: { id: req.podSandboxId ?? '', state: s?.state ?? 'SANDBOX_NOTREADY', createdAt: '1', metadata: { name: 'p', namespace: 'd', uid: s?.uid ?? '', attempt: 0 } }, info: {}, containersStatuses: [], timestamp: '0' } as never;
    })
    .onRuntime('ContainerStatus', (req) => {
      const c = this.containers.get(req.containerId ?? '');
      if (c && this.hang.has(c.uid)) return new Promise(() => undefined) as never;
      return { status: { id: req.containerId ?? '', state: c?.state ?? 'CONTAINER_UNKNOWN' }, info: {} } as never;
    });
}

function sandbox(id: string, uid: string, state: string): PodSandbox {
  return { id, state, labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.pod.name': `pod-${uid}`, 'io.kubernetes.pod.namespace': 'default' }, metadata: { name: `pod-${uid}`, namespace: 'default', uid, attempt: 0 } } as unknown as PodSandbox;
}
function container(id: string, uid: string, state: string): Container {
  return { id, podSandboxId: `sb-${uid}`, state, labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': id } } as unknown as Container;
}

function setup(cache = new MemoryCacheStore()) {
  const runtime = new Runtime();
  const sink = new Sink();
  const clock = new FakeClock(1_000_000);
  const pleg = new GenericPleg(runtime.cri, cache, sink, clock, silentLogger(), { inspectTimeoutMs: 5000, inspectConcurrency: 4, relistThresholdMs: 180_000 });
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

describe('PlegRunner', () => {
  /** A PLEG and its runner, relisting every second in generic mode and every 5 minutes in evented mode, falling back after 90s of relay silence. */
  const setupRunner = (mode: PlegMode, askRelay?: () => Promise<ContainerEventsStatusMessage | undefined>) => {
    const s = setup();
    return { ...s, runner: new PlegRunner(s.pleg, s.cache, s.sink, s.clock, silentLogger(), { relistPeriodMs: 1000, eventedRelistPeriodMs: 300_000, eventedSilenceMs: 90_000 }, mode, askRelay) };
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

  it('evented mode: events update the cache with the PLEG\'s own monotonic time; an unsupported relay makes it fall back', async () => {
    const { clock, cache, sink, runner } = setupRunner('evented');
    runner.start();
    await clock.step(0);
    const afterFirstRelist = cache.global;
    await clock.step(5000);
    assert.equal(cache.global, afterFirstRelist, 'no relist every second in evented mode');
    await runner.onRuntimeMessage({
      containerId: 'c9',
      containerEventType: 'CONTAINER_STARTED_EVENT',
      createdAt: '1', // an old runtime timestamp must not move the cache back
      podSandboxStatus: { id: 'sb-z', state: 'SANDBOX_READY', createdAt: '1', metadata: { name: 'z', namespace: 'default', uid: 'z', attempt: 0 } },
      containersStatuses: [{ id: 'c9', state: 'CONTAINER_RUNNING' }],
    });
    assert.deepEqual(sink.take(), ['z/ContainerStarted/c9']);
    assert.ok((cache.entries.get('z')?.timestamp ?? 0) > afterFirstRelist);
    await runner.onRuntimeMessage({ type: 'kubelet.v1.container_events_status', state: 'unsupported', detail: 'unknown method GetContainerEvents' });
    assert.equal(runner.mode.effective, 'generic');
    assert.match(runner.mode.fallbackReason ?? '', /does not stream container events/);
    const t = cache.global;
    await clock.step(1000);
    assert.ok(cache.global > t, 'relisting every second again');
    runner.setMode('evented');
    assert.equal(runner.mode.effective, 'evented');
    runner.stop();
  });

  it('switching to evented mode asks the relay at once, and falls back at once when events are unsupported', async () => {
    const askRelay = () => Promise.resolve({ type: 'kubelet.v1.container_events_status' as const, state: 'unsupported' as const, detail: 'unknown method GetContainerEvents' });
    const { clock, runner } = setupRunner('generic', askRelay);
    runner.start();
    runner.setMode('evented');
    await clock.step(0);
    assert.equal(runner.mode.desired, 'evented');
    assert.equal(runner.mode.effective, 'generic');
    assert.match(runner.mode.fallbackReason ?? '', /does not stream container events/);
    runner.stop();
  });

  it('evented mode relists every 5 minutes and stays healthy between relists (threshold 10m, written to the cache); generic mode is back to 3m', async () => {
    const { clock, cache, pleg, runner } = setupRunner('evented', () => Promise.resolve({ type: 'kubelet.v1.container_events_status' as const, state: 'streaming' as const, detail: '' }));
    runner.start();
    await clock.step(0);
    assert.equal(cache.relistThresholdMs, 600_000);
    for (let t = 0; t < 290_000; t += 10_000) {
      await runner.onRuntimeMessage({ type: 'kubelet.v1.container_events_status', state: 'streaming', detail: '' });
      await clock.step(10_000);
    }
    assert.equal(pleg.healthy().ok, true, pleg.healthy().detail);
    runner.setMode('generic');
    await clock.step(0);
    assert.equal(cache.relistThresholdMs, 180_000);
    runner.stop();
  });

  it('evented mode falls back when the relay is silent', async () => {
    const { clock, runner } = setupRunner('evented');
    runner.start();
    await clock.step(80_000);
    assert.equal(runner.mode.effective, 'evented');
    await clock.step(20_000);
    assert.equal(runner.mode.effective, 'generic');
    assert.match(runner.mode.fallbackReason ?? '', /no word from the container event relay/);
    runner.stop();
  });
});
