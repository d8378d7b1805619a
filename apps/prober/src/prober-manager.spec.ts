import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Container, ContainerStatus, Pod, PodStatus, Probe, ProbeResultRecord, ProbeResultValue, ProbeType } from '@app/contracts';
import { Registry } from '@app/observability';
import { PromProberMetrics } from './adapters/prom-prober-metrics.js';
import { DefaultProberManager, SAVE_RETRY_MS, podsToProbeAgain } from './prober-manager.js';
import { FakeProbeEventSink, FakeProbedPodSource, FakeProberMetrics, FakeProbeHandler, FakeProbeResultStore, FakeResultSink } from './testing.js';

const S = 1000;
const T0 = Date.UTC(2026, 0, 1);
const probe = (o: Partial<Probe> = {}): Probe => ({ exec: { command: ['true'] }, periodSeconds: 1, ...o });

function makePod(uid: string, containers: Container[], o: { initContainers?: Container[]; restartPolicy?: 'Always' | 'Never' } = {}): Pod {
  return {
    metadata: { name: `web-${uid}`, namespace: 'default', uid },
    spec: { containers, ...(o.initContainers ? { initContainers: o.initContainers } : {}), restartPolicy: o.restartPolicy ?? 'Always' },
  };
}

function containerStatus(name: string, id: string, state: 'running' | 'terminated' = 'running', started?: boolean): ContainerStatus {
  return {
    name,
    ready: false,
    restartCount: 0,
    image: 'busybox',
    imageID: '',
    containerID: `containerd://${id}`,
    state: state === 'running' ? { running: { startedAt: new Date(T0).toISOString() } } : { terminated: { exitCode: 0, reason: 'Completed' } },
    ...(started !== undefined ? { started } : {}),
  };
}

function status(statuses: ContainerStatus[], o: { phase?: PodStatus['phase']; init?: ContainerStatus[] } = {}): PodStatus {
  return { phase: o.phase ?? 'Running', podIP: '10.88.0.7', hostIP: '192.168.1.2', containerStatuses: statuses, ...(o.init ? { initContainerStatuses: o.init } : {}) };
}

function setup(random: () => number = () => 0, store = new FakeProbeResultStore(), pods?: FakeProbedPodSource) {
  const clock = new FakeClock();
  const handler = new FakeProbeHandler();
  const sink = new FakeResultSink();
  const metrics = new FakeProberMetrics();
  const events = new FakeProbeEventSink();
  const manager = new DefaultProberManager({ clock, handler, sink, store, metrics, events, random, ...(pods ? { pods } : {}) });
  return { clock, handler, sink, store, metrics, events, manager };
}

describe('ProberManager.addPod', () => {
  const liveness = probe();
  const pod = makePod('u1', [{ name: 'app', livenessProbe: liveness, readinessProbe: probe() }, { name: 'db', startupProbe: probe() }, { name: 'plain' }], {
    initContainers: [
      { name: 'sidecar', restartPolicy: 'Always', readinessProbe: probe() },
      { name: 'setup', readinessProbe: probe() },
    ],
  });
  const cases: { container: string; probeType: 'liveness' | 'readiness' | 'startup'; want: boolean }[] = [
    { container: 'app', probeType: 'liveness', want: true },
    { container: 'app', probeType: 'readiness', want: true },
    { container: 'app', probeType: 'startup', want: false },
    { container: 'db', probeType: 'startup', want: true },
    { container: 'plain', probeType: 'liveness', want: false },
    { container: 'sidecar', probeType: 'readiness', want: true },
    { container: 'setup', probeType: 'readiness', want: false },
  ];
  for (const tc of cases) {
    it(`${tc.container} ${tc.probeType}: ${tc.want ? 'a worker' : 'no worker'}`, () => {
      const { manager } = setup();
      manager.addPod(pod);
      assert.equal(manager.hasWorker('u1', tc.container, tc.probeType), tc.want);
    });
  }

  it('one worker per (pod, container, probe type), adding a pod twice adds none', () => {
    const { manager } = setup();
    manager.addPod(pod);
    manager.addPod(pod);
    assert.equal(manager.workerCount(), 4);
  });

  it('a pod without a UID gets no workers', () => {
    const { manager } = setup();
    manager.addPod({ metadata: { name: 'x' }, spec: { containers: [{ name: 'app', livenessProbe: probe() }] } });
    assert.equal(manager.workerCount(), 0);
  });
});

describe('ProberManager results', () => {
  it('publishes a probe_result with the bare container ID and the Unhealthy message, only on change', async () => {
    const { clock, handler, sink, events, manager } = setup();
    const pod = makePod('u1', [{ name: 'app', livenessProbe: probe({ failureThreshold: 1, terminationGracePeriodSeconds: 5 }) }]);
    manager.addPod(pod);
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    handler.answer('Success', 'Success', { result: 'Failure', output: 'exit 1' });
    await clock.step(0);
    await clock.step(S);
    await clock.step(S);
    assert.deepEqual(sink.messages, [
      { type: 'kubelet.v1.probe_result', probeType: 'liveness', podUid: 'u1', containerId: 'abc', containerName: 'app', result: 'Success', terminationGracePeriodSeconds: 5 },
      {
        type: 'kubelet.v1.probe_result',
        probeType: 'liveness',
        podUid: 'u1',
        containerId: 'abc',
        containerName: 'app',
        result: 'Failure',
        message: 'Liveness probe failed: exit 1',
        terminationGracePeriodSeconds: 5,
      },
    ]);
    assert.equal(manager.result('liveness', 'containerd://abc'), 'Failure');
    assert.equal(manager.result('liveness', 'abc'), 'Failure');
    assert.deepEqual(
      events.events.map((e) => [e.reason, e.message]),
      [['Unhealthy', 'Liveness probe failed: exit 1']],
    );
    await clock.step(S);
    assert.equal(sink.messages.length, 3, 'the failure repeats the next period');
    assert.equal(sink.messages[2]?.result, 'Failure');
  });

  it('a sink that fails does not stop the next results', async () => {
    const { clock, handler, sink, manager } = setup();
    sink.failNext();
    manager.addPod(makePod('u1', [{ name: 'app', readinessProbe: probe() }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    handler.answer('Success');
    await clock.step(0);
    assert.deepEqual(sink.results('readiness'), ['Success'], 'the initial Failure was lost, the Success went out');
  });
});

describe('ProberManager started and ready (UpdatePodStatus)', () => {
  it('no startup result yet: liveness and readiness wait; the startup success lets them probe', async () => {
    const { clock, handler, manager } = setup();
    const startup = probe({ failureThreshold: 10 });
    const liveness = probe();
    manager.addPod(makePod('u1', [{ name: 'app', startupProbe: startup, livenessProbe: liveness, readinessProbe: probe() }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')])); // no `started` from the status manager
    handler.answer('Failure', 'Failure', 'Success');
    await clock.step(0);
    await clock.step(S);
    const livenessRuns = () => handler.runs.filter((r) => r.probe === liveness).length;
    assert.equal(livenessRuns(), 0);
    assert.equal(manager.isStarted('u1', 'app'), false);
    assert.equal(manager.applyProbeResults('u1', status([containerStatus('app', 'abc')])).containerStatuses?.[0]?.started, false);
    await clock.step(S); // the startup probe succeeds
    assert.equal(manager.isStarted('u1', 'app'), true);
    await clock.step(S);
    assert.ok(livenessRuns() >= 1, 'liveness probes once started');
    assert.equal(handler.runs.filter((r) => r.probe === startup).length, 3, 'the startup probe stopped after its success');
  });

  const readiness: { name: string; readinessProbe?: Probe; state: 'running' | 'terminated'; answers: ('Success' | 'Failure')[]; want: boolean }[] = [
    { name: 'no readiness probe: ready once running', state: 'running', answers: [], want: true },
    { name: 'no readiness probe, not running: not ready', state: 'terminated', answers: [], want: false },
    { name: 'a readiness probe that has not succeeded: not ready', readinessProbe: probe(), state: 'running', answers: ['Failure'], want: false },
    { name: 'a readiness probe that succeeded: ready', readinessProbe: probe(), state: 'running', answers: ['Success'], want: true },
  ];
  for (const tc of readiness) {
    it(tc.name, async () => {
      const { clock, handler, manager } = setup();
      manager.addPod(makePod('u1', [{ name: 'app', ...(tc.readinessProbe ? { readinessProbe: tc.readinessProbe } : {}) }]));
      manager.updatePodStatus('u1', status([containerStatus('app', 'abc', tc.state)]));
      handler.answer(...tc.answers);
      await clock.step(0);
      assert.equal(manager.isReady('u1', 'app'), tc.want);
      assert.equal(manager.applyProbeResults('u1', status([containerStatus('app', 'abc', tc.state)])).containerStatuses?.[0]?.ready, tc.want);
    });
  }

  it('a sidecar is ready by its readiness probe, a plain init container once it exited 0', async () => {
    const { clock, handler, manager } = setup();
    const pod = makePod('u1', [{ name: 'app' }], { initContainers: [{ name: 'init' }, { name: 'side', restartPolicy: 'Always', readinessProbe: probe() }] });
    manager.addPod(pod);
    const s = status([containerStatus('app', 'a1')], { init: [containerStatus('init', 'i1', 'terminated'), containerStatus('side', 's1')] });
    manager.updatePodStatus('u1', s);
    handler.answer('Success');
    await clock.step(0);
    const applied = manager.applyProbeResults('u1', s);
    assert.deepEqual(
      applied.initContainerStatuses?.map((c) => [c.name, c.started, c.ready]),
      [
        ['init', false, true],
        ['side', true, true],
      ],
    );
  });

  it('a fed status of a started container that is not ready triggers a readiness probe at once', async () => {
    const { clock, handler, manager } = setup();
    manager.addPod(makePod('u1', [{ name: 'app', readinessProbe: probe({ periodSeconds: 10 }) }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    handler.answer('Failure');
    await clock.step(0);
    await clock.step(3 * S);
    assert.equal(handler.runs.length, 1);
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    await clock.step(0);
    assert.equal(handler.runs.length, 2, 'probed at 3s, not at 10s');
  });
});

describe('ProberManager worker teardown', () => {
  const pod = (restartPolicy: 'Always' | 'Never' = 'Always') => makePod('u1', [{ name: 'app', livenessProbe: probe(), readinessProbe: probe(), startupProbe: probe() }], { restartPolicy });
  const other = makePod('u2', [{ name: 'app', readinessProbe: probe() }]);
  const cases: { name: string; act: (m: DefaultProberManager, clock: FakeClock) => void | Promise<void>; restartPolicy?: 'Always' | 'Never'; left: string[] }[] = [
    { name: 'removePod stops every worker of the pod', act: (m) => m.removePod(pod()), left: ['u2/readiness'] },
    { name: 'cleanupPods stops the workers of pods not desired', act: (m) => m.cleanupPods(new Set(['u2'])), left: ['u2/readiness'] },
    { name: 'cleanupPods keeps desired pods', act: (m) => m.cleanupPods(new Set(['u1', 'u2'])), left: ['u1/liveness', 'u1/readiness', 'u1/startup', 'u2/readiness'] },
    { name: 'stopLivenessAndStartup keeps readiness', act: (m) => m.stopLivenessAndStartup(pod()), left: ['u1/readiness', 'u2/readiness'] },
    {
      name: 'the container terminated for good (restartPolicy Never)',
      restartPolicy: 'Never',
      act: async (m, clock) => {
        m.updatePodStatus('u1', status([{ ...containerStatus('app', 'abc', 'terminated'), state: { terminated: { exitCode: 1 } } }]));
        await clock.step(S);
      },
      left: ['u2/readiness'],
    },
    {
      name: 'the pod Succeeded',
      act: async (m, clock) => {
        m.updatePodStatus('u1', status([containerStatus('app', 'abc', 'terminated')], { phase: 'Succeeded' }));
        await clock.step(S);
      },
      left: ['u2/readiness'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { clock, handler, manager, metrics } = setup();
      manager.addPod(pod(tc.restartPolicy));
      manager.addPod(other);
      manager.updatePodStatus('u1', status([containerStatus('app', 'abc', 'running', true)]));
      manager.updatePodStatus('u2', status([containerStatus('app', 'def')]));
      await clock.step(0);
      await tc.act(manager, clock);
      const left = (['u1', 'u2'] as const).flatMap((uid) => (['liveness', 'readiness', 'startup'] as const).filter((t) => manager.hasWorker(uid, 'app', t)).map((t) => `${uid}/${t}`));
      assert.deepEqual(left, tc.left);
      assert.equal(manager.workerCount(), tc.left.length);
      assert.equal(metrics.forgotten.length, 4 - tc.left.length, 'the stopped workers metric series are deleted');
      const before = handler.runs.filter((r) => r.target.pod.metadata.uid === 'u1' && !tc.left.some((k) => k.startsWith('u1/'))).length;
      await clock.step(5 * S);
      const after = handler.runs.filter((r) => r.target.pod.metadata.uid === 'u1' && !tc.left.some((k) => k.startsWith('u1/'))).length;
      assert.equal(after, before, 'stopped workers probe no more');
    });
  }

  it('removePod forgets the pod status', async () => {
    const { clock, manager } = setup();
    manager.addPod(pod());
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc', 'running', true)]));
    await clock.step(0);
    manager.removePod(pod());
    assert.equal(manager.isStarted('u1', 'app'), false);
    assert.equal(manager.result('liveness', 'abc'), undefined);
  });
});

describe('ProberManager random offset', () => {
  it('pods added while the prober is young are spread over their period', async () => {
    const offsets = [0.1, 0.5, 0.9];
    let i = 0;
    const { clock, handler, manager } = setup(() => offsets[i++] ?? 0);
    for (const uid of ['u1', 'u2', 'u3']) {
      manager.addPod(makePod(uid, [{ name: 'app', livenessProbe: probe({ periodSeconds: 10 }) }]));
      manager.updatePodStatus(uid, status([containerStatus('app', `c-${uid}`)]));
    }
    const firstProbes: number[] = [];
    for (let t = 0; t < 10; t++) {
      await clock.step(t === 0 ? 0 : S);
      while (firstProbes.length < handler.runs.length) firstProbes.push(t);
    }
    assert.deepEqual(firstProbes, [1, 5, 9]);
  });

  it('a pod added once the prober has run longer than the period probes at once', async () => {
    const { clock, handler, manager } = setup(() => 0.9);
    await clock.step(60 * S);
    manager.addPod(makePod('u1', [{ name: 'app', livenessProbe: probe({ periodSeconds: 10 }) }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    await clock.step(0);
    assert.equal(handler.runs.length, 1);
  });
});

describe('ProberManager metrics', () => {
  it('counts probes by result, with durations for successes only, and deletes the series when the worker stops', async () => {
    const { clock, handler, manager, metrics } = setup();
    const pod = makePod('u1', [{ name: 'app', readinessProbe: probe() }]);
    manager.addPod(pod);
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    handler.answer('Success', 'Failure');
    await clock.step(0);
    await clock.step(S);
    const labels = { probe_type: 'Readiness', container: 'app', pod: 'web-u1', namespace: 'default' };
    assert.deepEqual(metrics.observed, [
      { labels, result: 'successful', durationSeconds: 0 },
      { labels, result: 'failed' },
    ]);
    manager.removePod(pod);
    assert.deepEqual(metrics.forgotten, [labels]);
  });

  it('PromProberMetrics writes prober_probe_total and prober_probe_duration_seconds', async () => {
    const registry = new Registry();
    const m = new PromProberMetrics(registry);
    const labels = { probe_type: 'Liveness', container: 'app', pod: 'web', namespace: 'default' };
    m.observe(labels, 'successful', 0.02);
    m.observe(labels, 'successful', 0.03);
    m.observe(labels, 'failed');
    const text = await registry.metrics();
    assert.match(text, /prober_probe_total\{probe_type="Liveness",result="successful",container="app",pod="web",namespace="default"\} 2/);
    assert.match(text, /prober_probe_total\{probe_type="Liveness",result="failed",container="app",pod="web",namespace="default"\} 1/);
    assert.match(text, /prober_probe_duration_seconds_count\{probe_type="Liveness",container="app",pod="web",namespace="default"\} 2/);
    m.forget(labels);
    assert.doesNotMatch(await registry.metrics(), /pod="web"/);
  });
});

describe('ProberManager results in the probe-results store (results.Manager)', () => {
  const kept = (containerName: string, probeType: ProbeType, containerId: string, result: ProbeResultValue, podUid = 'u1'): ProbeResultRecord => ({ podUid, containerName, probeType, containerId, result, time: T0 });

  it('each change is saved, with the bare container ID and the time, before it is announced', async () => {
    const { clock, handler, sink, store, manager } = setup();
    const order: string[] = [];
    const put = store.put.bind(store);
    store.put = (r) => (order.push(`put ${r.result}`), put(r));
    const publish = sink.publish.bind(sink);
    sink.publish = (m) => (order.push(`announce ${m.result}`), publish(m));
    manager.addPod(makePod('u1', [{ name: 'app', readinessProbe: probe() }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    handler.answer('Success');
    await clock.step(0);
    assert.deepEqual(order, ['put Failure', 'announce Failure', 'put Success', 'announce Success']);
    assert.deepEqual(store.records.get('u1/app/readiness'), { podUid: 'u1', containerName: 'app', probeType: 'readiness', containerId: 'abc', result: 'Success', time: clock.now() });
  });

  it('a result that could not be saved is not announced; it is saved and announced on a retry', async () => {
    const { clock, handler, sink, store, manager } = setup();
    manager.addPod(makePod('u1', [{ name: 'app', readinessProbe: probe({ periodSeconds: 10 }) }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    store.failNext(2);
    handler.answer('Success');
    await clock.step(0);
    assert.deepEqual(sink.results('readiness'), [], 'nothing announced that readers would not find');
    assert.deepEqual(store.writes, ['put u1/app/readiness Failure (failed)', 'put u1/app/readiness Success (failed)']);
    await clock.step(SAVE_RETRY_MS);
    assert.deepEqual(store.writes.slice(2), ['put u1/app/readiness Success'], 'the superseded Failure is not retried');
    assert.deepEqual(sink.results('readiness'), ['Success']);
    assert.equal(store.result('u1', 'app', 'readiness'), 'Success');
  });

  it('a new container ID overwrites the old container\'s result with the initial value', async () => {
    const { clock, handler, store, manager } = setup();
    manager.addPod(makePod('u1', [{ name: 'app', readinessProbe: probe() }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    handler.answer('Success');
    await clock.step(0);
    handler.block();
    manager.updatePodStatus('u1', status([containerStatus('app', 'def')]));
    await clock.step(S);
    assert.deepEqual(store.records.get('u1/app/readiness')?.containerId, 'def');
    assert.equal(store.result('u1', 'app', 'readiness'), 'Failure');
    handler.unblock();
  });

  const removals: { name: string; act: (m: DefaultProberManager, pod: Pod) => void; left: string[] }[] = [
    { name: 'RemovePod removes every result of the pod', act: (m, pod) => m.removePod(pod), left: [] },
    { name: 'StopLivenessAndStartup removes the liveness and startup results, readiness stays', act: (m, pod) => m.stopLivenessAndStartup(pod), left: ['u1/app/readiness'] },
    { name: 'CleanupPods removes the results of pods not desired', act: (m) => m.cleanupPods(new Set(['u2'])), left: [] },
    { name: 'CleanupPods keeps those of desired pods', act: (m) => m.cleanupPods(new Set(['u1'])), left: ['u1/app/liveness', 'u1/app/readiness', 'u1/app/startup'] },
    { name: 'a prober shutting down (stopAll) keeps every result for the next one', act: (m) => m.stopAll(), left: ['u1/app/liveness', 'u1/app/readiness', 'u1/app/startup'] },
  ];
  for (const tc of removals) {
    it(tc.name, async () => {
      const { clock, store, manager } = setup();
      const pod = makePod('u1', [{ name: 'app', livenessProbe: probe(), readinessProbe: probe(), startupProbe: probe() }]);
      manager.addPod(pod);
      manager.updatePodStatus('u1', status([containerStatus('app', 'abc', 'running', true)]));
      await clock.step(0);
      tc.act(manager, pod);
      await clock.step(0);
      assert.deepEqual([...store.records.keys()].sort(), tc.left);
    });
  }

  it('a restarted prober resumes from the kept readiness Success of the same container: Ready at once, nothing written or announced', async () => {
    const store = new FakeProbeResultStore([kept('app', 'readiness', 'abc', 'Success')]);
    const { clock, handler, sink, manager } = setup(() => 0.5, store);
    assert.deepEqual(await manager.restore(), { results: 1, pods: 0 });
    handler.block();
    manager.addPod(makePod('u1', [{ name: 'app', readinessProbe: probe({ periodSeconds: 10 }) }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc')]));
    await clock.step(5 * S); // the first probe, after the random offset, is in flight
    assert.equal(handler.runs.length, 1);
    assert.equal(manager.isReady('u1', 'app'), true);
    assert.deepEqual(sink.messages, []);
    assert.deepEqual(store.writes, []);
    handler.unblock();
    await clock.step(0);
    assert.deepEqual(store.writes, [], 'a probe that agrees changes nothing');
  });

  it('a restarted prober keeps a kept result only for the container it was for', async () => {
    const store = new FakeProbeResultStore([kept('app', 'readiness', 'old', 'Success')]);
    const { clock, sink, manager } = setup(() => 0, store);
    await manager.restore();
    manager.addPod(makePod('u1', [{ name: 'app', readinessProbe: probe() }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'new')]));
    await clock.step(0);
    assert.equal(sink.results('readiness', 'new')[0], 'Failure', 'a new container starts from the initial value');
    assert.equal(store.records.get('u1/app/readiness')?.containerId, 'new');
  });

  it('a restarted prober resumes a kept liveness failure on hold: announced again each period, not probed', async () => {
    const store = new FakeProbeResultStore([kept('app', 'liveness', 'abc', 'Failure')]);
    const { clock, handler, sink, manager } = setup(() => 0, store);
    await manager.restore();
    manager.addPod(makePod('u1', [{ name: 'app', livenessProbe: probe() }]));
    manager.updatePodStatus('u1', status([containerStatus('app', 'abc', 'running', true)]));
    await clock.step(0);
    await clock.step(S);
    assert.equal(handler.runs.length, 0, 'on hold until a new container');
    assert.deepEqual(sink.results('liveness'), ['Failure', 'Failure']);
    assert.deepEqual(store.writes, []);
  });

  it('kept results of a pod the prober never gets again go with CleanupPods, those of a removed pod with RemovePod', async () => {
    const store = new FakeProbeResultStore([kept('app', 'readiness', 'abc', 'Success'), kept('app', 'readiness', 'def', 'Success', 'u2'), kept('db', 'startup', 'ghi', 'Success', 'u3')]);
    const { clock, manager } = setup(() => 0, store);
    await manager.restore();
    manager.cleanupPods(new Set(['u1', 'u3']));
    manager.removePod(makePod('u3', [{ name: 'db', startupProbe: probe() }]));
    await clock.step(0);
    assert.deepEqual([...store.records.keys()], ['u1/app/readiness']);
  });
});

describe('ProberManager.restore: a restarted prober probes the running pods again at once (issue 12)', () => {
  const kept = (containerName: string, probeType: ProbeType, containerId: string, result: ProbeResultValue, podUid = 'u1'): ProbeResultRecord => ({ podUid, containerName, probeType, containerId, result, time: T0 });
  const web = (uid = 'u1') => makePod(uid, [{ name: 'app', readinessProbe: probe(), livenessProbe: probe() }]);
  const readyStatus = (id = 'abc') => status([{ ...containerStatus('app', id, 'running', true), ready: true }]);

  it('the kept Ready pod stays Ready, is probed within a period, and a failing readiness probe makes it NotReady without any AddPod', async () => {
    const store = new FakeProbeResultStore([kept('app', 'readiness', 'abc', 'Success'), kept('app', 'liveness', 'abc', 'Success')]);
    const pods = new FakeProbedPodSource().pod(web()).status('u1', readyStatus());
    const { clock, handler, sink, manager } = setup(() => 0.5, store, pods);
    assert.deepEqual(await manager.restore(), { results: 2, pods: 1 });
    assert.equal(manager.hasWorker('u1', 'app', 'readiness'), true);
    assert.equal(manager.hasWorker('u1', 'app', 'liveness'), true);
    handler.otherwise = { result: 'Failure', output: 'no' };
    await clock.step(S / 2); // the random offset: the first probes
    assert.equal(manager.isReady('u1', 'app'), true, 'resumed from the kept Success');
    assert.ok(handler.runs.length > 0, 'probed within a period of the start');
    await clock.step(2 * S); // failureThreshold 3
    assert.equal(manager.isReady('u1', 'app'), false);
    assert.equal(store.result('u1', 'app', 'readiness'), 'Failure');
    assert.deepEqual(sink.results('readiness', 'abc'), ['Failure']);
    assert.deepEqual(sink.results('liveness', 'abc'), ['Failure']);
  });

  it('the AddPod of the pod\'s next sync adds no second worker', async () => {
    const pods = new FakeProbedPodSource().pod(web()).status('u1', readyStatus());
    const { manager } = setup(() => 0, new FakeProbeResultStore(), pods);
    await manager.restore();
    manager.addPod(web());
    assert.equal(manager.workerCount(), 2);
  });

  it('a kept result for another container is not adopted: the running container starts from the initial value', async () => {
    const store = new FakeProbeResultStore([kept('app', 'readiness', 'old', 'Success')]);
    const pods = new FakeProbedPodSource().pod(makePod('u1', [{ name: 'app', readinessProbe: probe() }])).status('u1', readyStatus('new'));
    const { clock, handler, manager } = setup(() => 0, store, pods);
    handler.block();
    await manager.restore();
    await clock.step(0);
    assert.equal(manager.isReady('u1', 'app'), false);
    assert.equal(store.records.get('u1/app/readiness')?.containerId, 'new');
    handler.unblock();
  });

  it('a read that fails rejects restore (the prober does not start half-blind)', async () => {
    const pods = new FakeProbedPodSource().pod(web()).status('u1', readyStatus()).failNext();
    const { manager } = setup(() => 0, new FakeProbeResultStore(), pods);
    await assert.rejects(manager.restore(), /read failed/);
  });

  const cases: { name: string; record?: { admitted?: boolean; terminationRequested?: boolean }; status?: PodStatus | 'none'; finished?: boolean; uid?: string; want: boolean }[] = [
    { name: 'a running pod is probed again', want: true },
    { name: 'a pending pod (no container yet) is probed again, as AddPod adds it before its containers start', status: status([], { phase: 'Pending' }), want: true },
    { name: 'a pod not admitted is not', record: { admitted: false }, want: false },
    { name: 'a pod whose termination was asked for is not (its pod worker removes it)', record: { terminationRequested: true }, want: false },
    { name: 'a pod never synced (no status) is not', status: 'none', want: false },
    { name: 'a Succeeded pod is not', status: status([], { phase: 'Succeeded' }), want: false },
    { name: 'a Failed pod is not', status: status([], { phase: 'Failed' }), want: false },
    { name: 'a pod whose status is finished (TerminatePod) is not', finished: true, want: false },
    { name: 'a pod without a UID is not', uid: '', want: false },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const pod = tc.uid === undefined ? web() : { ...web(), metadata: { ...web().metadata, uid: tc.uid } };
      const source = new FakeProbedPodSource().pod(pod, tc.record ?? {});
      if (tc.status !== 'none') source.status('u1', tc.status ?? readyStatus(), tc.finished ?? false);
      assert.equal(podsToProbeAgain(source.desired, source.statuses).length, tc.want ? 1 : 0);
      const { manager } = setup(() => 0, new FakeProbeResultStore(), source);
      assert.deepEqual(await manager.restore(), { results: 0, pods: tc.want ? 1 : 0 });
      assert.equal(manager.hasWorker(tc.uid ?? 'u1', 'app', 'readiness'), tc.want);
    });
  }
});
