import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus, PodCondition, PodSpec, PodStatus } from '@app/contracts';
import { PodStatusVersions, checkContainerStateTransition, isPodStatusByKubeletEqual, normalizeStatus, statusPodOf } from './pod-status-versions.js';
import type { StatusEntry, StatusPod } from './pod-status-versions.js';

const S = 1000;
const T0 = 1_700_000_000_000; // 2023-11-14T22:13:20Z
const at = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const UID = 'uid-1';

const spec = (o: Partial<PodSpec> = {}): PodSpec => ({ containers: [{ name: 'app', image: 'busybox' }], restartPolicy: 'Always', ...o });
const podOf = (o: Partial<PodSpec> = {}, extra: Partial<StatusPod> = {}): StatusPod => ({ name: 'web-node1', namespace: 'default', spec: spec(o), ...extra });

const running = (name: string, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name,
  state: { running: { startedAt: at(T0) } },
  ready: false,
  restartCount: 0,
  image: 'busybox',
  imageID: 'sha256:1',
  containerID: `containerd://${name}-id`,
  started: true,
  ...o,
});
const exited = (name: string, exitCode: number, o: Partial<ContainerStatus> = {}): ContainerStatus => ({
  ...running(name),
  state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: at(T0), finishedAt: at(T0 + S) } },
  started: false,
  ...o,
});
const waiting = (name: string, reason: string): ContainerStatus => ({ ...running(name), state: { waiting: { reason } }, started: false, containerID: undefined });

const cond = (type: string, status: PodCondition['status'], o: Partial<PodCondition> = {}): PodCondition => ({ type, status, ...o });
const status = (o: Partial<PodStatus> = {}): PodStatus => ({
  phase: 'Running',
  conditions: [cond('Initialized', 'True'), cond('Ready', 'False', { reason: 'ContainersNotReady', message: 'containers with unready status: [app]' }), cond('ContainersReady', 'False', { reason: 'ContainersNotReady', message: 'containers with unready status: [app]' }), cond('PodScheduled', 'True')],
  containerStatuses: [running('app')],
  startTime: at(T0),
  ...o,
});

const conditionOf = (s: PodStatus | undefined, type: string): PodCondition | undefined => s?.conditions?.find((c) => c.type === type);

describe('PodStatusVersions: versions', () => {
  it('the first status is version 1, each change one more', () => {
    const store = new PodStatusVersions();
    const r1 = store.setPodStatus(UID, podOf(), status({ phase: 'Pending' }), T0);
    const r2 = store.setPodStatus(UID, podOf(), status(), T0 + S);
    assert.equal(r1.changed, true);
    assert.equal(r1.entry?.version, 1);
    assert.equal(r2.changed, true);
    assert.equal(r2.entry?.version, 2);
    assert.deepEqual([r2.entry?.podName, r2.entry?.podNamespace], ['web-node1', 'default']);
    assert.equal(store.get(UID)?.status.phase, 'Running');
  });

  const same: { name: string; change: (s: PodStatus) => void }[] = [
    { name: 'the identical status', change: () => undefined },
    { name: 'only lastTransitionTime and lastProbeTime differ', change: (s) => s.conditions?.forEach((c) => ((c.lastTransitionTime = at(T0 + 99 * S)), (c.lastProbeTime = at(T0 + 99 * S)))) },
    { name: 'only sub-second parts of times differ', change: (s) => s.containerStatuses?.[0]?.state?.running && (s.containerStatuses[0].state.running.startedAt = new Date(T0 + 400).toISOString()) },
    { name: 'the container statuses come in another order', change: (s) => s.containerStatuses?.reverse() },
    { name: 'an empty list stands for an absent one', change: (s) => (s.initContainerStatuses = []) },
    { name: 'a condition the kubelet does not own changed', change: (s) => s.conditions?.push(cond('example.com/gate', 'True')) },
  ];
  for (const tc of same) {
    it(`not a change: ${tc.name}`, () => {
      const store = new PodStatusVersions();
      const two = status({ containerStatuses: [running('app'), running('side')] });
      store.setPodStatus(UID, podOf(), two, T0);
      const next = structuredClone(two);
      tc.change(next);
      const r = store.setPodStatus(UID, podOf(), next, T0 + 5 * S);
      assert.equal(r.changed, false);
      assert.equal(r.dropped, undefined);
      assert.equal(r.entry?.version, 1);
    });
  }

  const changes: { name: string; change: (s: PodStatus) => void }[] = [
    { name: "a kubelet condition's status", change: (s) => conditionOf(s, 'Initialized') && (conditionOf(s, 'Initialized')!.status = 'False') },
    { name: "a kubelet condition's message", change: (s) => conditionOf(s, 'Ready') && (conditionOf(s, 'Ready')!.message = 'other') },
    { name: 'a restart count', change: (s) => s.containerStatuses?.[0] && (s.containerStatuses[0].restartCount = 1) },
    { name: 'started set to false where it was unset', change: (s) => s.containerStatuses?.[0] && (s.containerStatuses[0].started = false) },
    { name: 'the pod IP', change: (s) => (s.podIP = '10.88.77.5') },
  ];
  for (const tc of changes) {
    it(`a change: ${tc.name}`, () => {
      const store = new PodStatusVersions();
      const first = status({ containerStatuses: [{ ...running('app'), started: undefined }] });
      store.setPodStatus(UID, podOf(), first, T0);
      const next = structuredClone(first);
      tc.change(next);
      const r = store.setPodStatus(UID, podOf(), next, T0 + S);
      assert.equal(r.changed, true);
      assert.equal(r.entry?.version, 2);
    });
  }

  it('a pod being deleted gets a new version even for the same status', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf(), status(), T0);
    const r = store.setPodStatus(UID, podOf({}, { deletionTimestamp: at(T0) }), status(), T0 + S);
    assert.equal(r.changed, true);
    assert.equal(r.entry?.version, 2);
  });

  it('a store rebuilt from its entries continues their versions', () => {
    const first = new PodStatusVersions();
    first.setPodStatus(UID, podOf(), status({ phase: 'Pending' }), T0);
    first.setPodStatus(UID, podOf(), status(), T0);
    const rebuilt = new PodStatusVersions(first.all());
    assert.equal(rebuilt.get(UID)?.version, 2);
    assert.equal(rebuilt.setPodStatus(UID, podOf(), status(), T0).changed, false);
    assert.equal(rebuilt.setPodStatus(UID, podOf(), status({ podIP: '10.88.77.9' }), T0).entry?.version, 3);
  });

  it('what get and all return is a copy', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf(), status(), T0);
    const got = store.get(UID);
    if (got) got.status.phase = 'Failed';
    assert.equal(store.get(UID)?.status.phase, 'Running');
  });
});

describe('PodStatusVersions: dropped updates', () => {
  const cases: { name: string; spec: Partial<PodSpec>; before: PodStatus; after: PodStatus; dropped: RegExp | undefined }[] = [
    { name: 'Succeeded back to Running', spec: { restartPolicy: 'Always' }, before: status({ phase: 'Succeeded', containerStatuses: [exited('app', 0)] }), after: status(), dropped: /is Succeeded: phase may not change to Running/ },
    { name: 'Failed to Succeeded', spec: { restartPolicy: 'Never' }, before: status({ phase: 'Failed', containerStatuses: [exited('app', 1)] }), after: status({ phase: 'Succeeded', containerStatuses: [exited('app', 1)] }), dropped: /is Failed: phase may not change to Succeeded/ },
    { name: 'Failed to no phase', spec: {}, before: status({ phase: 'Failed', containerStatuses: [exited('app', 1)] }), after: status({ phase: undefined }), dropped: /is Failed: phase may not change to <none>/ },
    { name: 'Never: a terminated container running again', spec: { restartPolicy: 'Never' }, before: status({ containerStatuses: [exited('app', 0)] }), after: status(), dropped: /terminated container app attempted illegal transition to non-terminated state/ },
    { name: 'Never: a failed container waiting again', spec: { restartPolicy: 'Never' }, before: status({ containerStatuses: [exited('app', 1)] }), after: status({ containerStatuses: [waiting('app', 'ContainerCreating')] }), dropped: /terminated container app attempted illegal transition/ },
    { name: 'OnFailure: a succeeded container running again', spec: { restartPolicy: 'OnFailure' }, before: status({ containerStatuses: [exited('app', 0)] }), after: status(), dropped: /terminated container app attempted illegal transition/ },
    { name: 'OnFailure: a failed container restarts', spec: { restartPolicy: 'OnFailure' }, before: status({ containerStatuses: [exited('app', 1)] }), after: status(), dropped: undefined },
    { name: 'Always: a terminated container restarts', spec: { restartPolicy: 'Always' }, before: status({ containerStatuses: [exited('app', 0)] }), after: status(), dropped: undefined },
    {
      name: 'Never: a completed init container running again',
      spec: { restartPolicy: 'Never', initContainers: [{ name: 'init' }] },
      before: status({ initContainerStatuses: [exited('init', 0)] }),
      after: status({ initContainerStatuses: [running('init')] }),
      dropped: /terminated init container init attempted illegal transition/,
    },
    {
      name: 'Never: a sidecar restarts',
      spec: { restartPolicy: 'Never', initContainers: [{ name: 'side', restartPolicy: 'Always' }] },
      before: status({ initContainerStatuses: [exited('side', 0)] }),
      after: status({ initContainerStatuses: [running('side')] }),
      dropped: undefined,
    },
    {
      name: 'Never: init statuses that do not match the spec',
      spec: { restartPolicy: 'Never', initContainers: [{ name: 'other' }] },
      before: status({ initContainerStatuses: [exited('init', 0)] }),
      after: status({ initContainerStatuses: [exited('init', 0)] }),
      dropped: /found mismatch between pod spec and status, container: init/,
    },
    { name: 'a terminal phase may stay terminal with new details', spec: { restartPolicy: 'Never' }, before: status({ phase: 'Failed', containerStatuses: [exited('app', 1)] }), after: status({ phase: 'Failed', reason: 'DeadlineExceeded', containerStatuses: [exited('app', 1)] }), dropped: undefined },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const store = new PodStatusVersions();
      assert.equal(store.setPodStatus(UID, podOf(tc.spec), tc.before, T0).changed, true);
      const r = store.setPodStatus(UID, podOf(tc.spec), tc.after, T0 + S);
      if (tc.dropped) {
        assert.equal(r.changed, false);
        assert.match(r.dropped ?? '', tc.dropped);
        assert.equal(r.entry?.version, 1, 'the current entry comes back');
        assert.deepEqual(store.get(UID)?.status.phase, tc.before.phase);
      } else {
        assert.equal(r.dropped, undefined);
        assert.equal(r.changed, true);
        assert.equal(r.entry?.version, 2);
      }
    });
  }

  it('checkContainerStateTransition without a spec takes the default policy, Always', () => {
    assert.equal(checkContainerStateTransition(status({ containerStatuses: [exited('app', 0)] }), status(), undefined), undefined);
  });
});

describe('PodStatusVersions: times', () => {
  it('lastTransitionTime is kept while a condition holds, and now when it flips', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf(), status(), T0);
    const first = store.get(UID)?.status;
    assert.equal(conditionOf(first, 'Ready')?.lastTransitionTime, at(T0));
    const flipped = status({ conditions: [cond('Initialized', 'True'), cond('Ready', 'True'), cond('ContainersReady', 'True'), cond('PodScheduled', 'True')] });
    const r = store.setPodStatus(UID, podOf(), flipped, T0 + 7 * S);
    assert.equal(conditionOf(r.entry?.status, 'Ready')?.lastTransitionTime, at(T0 + 7 * S));
    assert.equal(conditionOf(r.entry?.status, 'ContainersReady')?.lastTransitionTime, at(T0 + 7 * S));
    assert.equal(conditionOf(r.entry?.status, 'Initialized')?.lastTransitionTime, at(T0));
    assert.equal(conditionOf(r.entry?.status, 'PodScheduled')?.lastTransitionTime, at(T0));
  });

  it('a condition the kubelet does not stamp keeps the time it came with', () => {
    const store = new PodStatusVersions();
    const s = status();
    s.conditions?.push(cond('example.com/gate', 'True', { lastTransitionTime: at(T0 - 60 * S) }));
    const r = store.setPodStatus(UID, podOf(), s, T0);
    assert.equal(conditionOf(r.entry?.status, 'example.com/gate')?.lastTransitionTime, at(T0 - 60 * S));
  });

  it('startTime is the first one kept, or now when the first status has none', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf(), status({ startTime: undefined, phase: 'Pending' }), T0 + 3 * S);
    assert.equal(store.get(UID)?.status.startTime, at(T0 + 3 * S));
    store.setPodStatus(UID, podOf(), status({ startTime: at(T0 + 99 * S) }), T0 + 4 * S);
    assert.equal(store.get(UID)?.status.startTime, at(T0 + 3 * S));
  });

  it('normalizeStatus: second precision, sorted statuses, init statuses in spec order, capped messages', () => {
    const s: PodStatus = {
      startTime: '2023-11-14T22:13:20.987654321Z',
      conditions: [cond('Ready', 'True', { lastTransitionTime: '2023-11-14T22:13:21.5Z', lastProbeTime: null })],
      containerStatuses: [exited('b', 1, { state: { terminated: { exitCode: 1, message: 'é'.repeat(5000), finishedAt: '2023-11-14T23:13:21.999+01:00' } } }), running('a')],
      initContainerStatuses: [exited('i2', 0), exited('i1', 0)],
    };
    const n = normalizeStatus(spec({ containers: [{ name: 'a' }, { name: 'b' }], initContainers: [{ name: 'i1' }, { name: 'i2' }] }), s);
    assert.equal(n.startTime, '2023-11-14T22:13:20Z');
    assert.equal(n.conditions?.[0]?.lastTransitionTime, '2023-11-14T22:13:21Z');
    assert.equal(n.conditions?.[0]?.lastProbeTime, null);
    assert.deepEqual(n.containerStatuses?.map((c) => c.name), ['a', 'b']);
    assert.deepEqual(n.initContainerStatuses?.map((c) => c.name), ['i1', 'i2']);
    const b = n.containerStatuses?.[1]?.state?.terminated;
    assert.equal(b?.finishedAt, '2023-11-14T22:13:21Z');
    // 12 KiB shared by four containers: 3072 bytes, 1536 two-byte characters.
    assert.equal(b?.message, 'é'.repeat(1536));
  });

  it('isPodStatusByKubeletEqual compares kubelet conditions by status, reason and message only', () => {
    const a = status();
    const b = structuredClone(a);
    for (const c of b.conditions ?? []) c.lastTransitionTime = at(T0 + 5 * S);
    assert.equal(isPodStatusByKubeletEqual(a, b), true);
    const c = structuredClone(a);
    if (c.conditions?.[1]) c.conditions[1].reason = 'Other';
    assert.equal(isPodStatusByKubeletEqual(a, c), false);
  });
});

describe('PodStatusVersions: readiness and startup', () => {
  const setUp = (o: Partial<PodSpec> = {}, s: PodStatus = status()): PodStatusVersions => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf(o), s, T0);
    return store;
  };

  it('a ready container makes Ready and ContainersReady True, stamped now, in a new version', () => {
    const store = setUp();
    const r = store.setContainerReadiness(UID, 'app-id', true, T0 + 10 * S);
    assert.equal(r.changed, true);
    assert.equal(r.entry?.version, 2);
    assert.equal(r.entry?.status.containerStatuses?.[0]?.ready, true);
    assert.deepEqual(conditionOf(r.entry?.status, 'Ready'), { type: 'Ready', status: 'True', lastTransitionTime: at(T0 + 10 * S) });
    assert.deepEqual(conditionOf(r.entry?.status, 'ContainersReady'), { type: 'ContainersReady', status: 'True', lastTransitionTime: at(T0 + 10 * S) });
    assert.equal(conditionOf(r.entry?.status, 'Initialized')?.lastTransitionTime, at(T0));
  });

  it('then unready again: False with the unready containers named', () => {
    const store = setUp();
    store.setContainerReadiness(UID, 'app-id', true, T0 + 10 * S);
    const r = store.setContainerReadiness(UID, 'app-id', false, T0 + 20 * S);
    assert.deepEqual(conditionOf(r.entry?.status, 'Ready'), { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [app]', lastTransitionTime: at(T0 + 20 * S) });
    assert.equal(r.entry?.version, 3);
  });

  it('one of two ready: Ready stays False and names the other', () => {
    const store = setUp({ containers: [{ name: 'app' }, { name: 'web' }] }, status({ containerStatuses: [running('app'), running('web')] }));
    const r = store.setContainerReadiness(UID, 'web-id', true, T0 + S);
    assert.equal(conditionOf(r.entry?.status, 'ContainersReady')?.message, 'containers with unready status: [app]');
    assert.equal(conditionOf(r.entry?.status, 'Ready')?.status, 'False');
  });

  it('a sidecar counts for ContainersReady', () => {
    const store = setUp({ initContainers: [{ name: 'side', restartPolicy: 'Always' }] }, status({ initContainerStatuses: [running('side')], containerStatuses: [running('app', { ready: true })] }));
    const r = store.setContainerReadiness(UID, 'side-id', true, T0 + S);
    assert.equal(r.entry?.status.initContainerStatuses?.[0]?.ready, true);
    assert.equal(conditionOf(r.entry?.status, 'ContainersReady')?.status, 'True');
  });

  it('a readiness gate not True keeps Ready False', () => {
    const store = setUp({ readinessGates: [{ conditionType: 'example.com/lb' }] });
    const r = store.setContainerReadiness(UID, 'app-id', true, T0 + S);
    assert.equal(conditionOf(r.entry?.status, 'ContainersReady')?.status, 'True');
    assert.deepEqual(conditionOf(r.entry?.status, 'Ready'), {
      type: 'Ready',
      status: 'False',
      reason: 'ReadinessGatesNotReady',
      message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
      lastTransitionTime: at(T0),
    });
  });

  it('in a Failed pod readiness changes the container but not the conditions: PodFailed', () => {
    const store = setUp({ restartPolicy: 'Never' }, status({ phase: 'Failed' }));
    const r = store.setContainerReadiness(UID, 'app-id', true, T0 + S);
    assert.equal(r.entry?.status.containerStatuses?.[0]?.ready, true);
    assert.equal(conditionOf(r.entry?.status, 'Ready')?.reason, 'PodFailed');
    assert.equal(conditionOf(r.entry?.status, 'Ready')?.status, 'False');
  });

  it('the readiness of a store rebuilt from KV, before any SetPodStatus, uses the statuses for a spec', () => {
    const store = new PodStatusVersions(setUp().all());
    const r = store.setContainerReadiness(UID, 'app-id', true, T0 + S);
    assert.equal(conditionOf(r.entry?.status, 'Ready')?.status, 'True');
    assert.equal(r.entry?.podName, 'web-node1');
  });

  const noChange: { name: string; run: (store: PodStatusVersions) => ReturnType<PodStatusVersions['setContainerReadiness']>; dropped: RegExp | undefined }[] = [
    { name: 'readiness unchanged', run: (s) => s.setContainerReadiness(UID, 'app-id', false, T0 + S), dropped: undefined },
    { name: 'readiness of an unknown container', run: (s) => s.setContainerReadiness(UID, 'nope', true, T0 + S), dropped: /unknown container nope/ },
    { name: 'readiness of a pod without status', run: (s) => s.setContainerReadiness('uid-2', 'app-id', true, T0 + S), dropped: /before pod uid-2 has synced/ },
    { name: 'startup unchanged', run: (s) => s.setContainerStartup(UID, 'app-id', true, T0 + S), dropped: undefined },
    { name: 'startup of an unknown container', run: (s) => s.setContainerStartup(UID, 'nope', true, T0 + S), dropped: /unknown container nope/ },
    { name: 'startup of a pod without status', run: (s) => s.setContainerStartup('uid-2', 'app-id', true, T0 + S), dropped: /before pod uid-2 has synced/ },
    { name: 'the ID prefix alone does not match', run: (s) => s.setContainerReadiness(UID, 'app', true, T0 + S), dropped: /unknown container app/ },
  ];
  for (const tc of noChange) {
    it(`no new version: ${tc.name}`, () => {
      const store = setUp();
      const r = tc.run(store);
      assert.equal(r.changed, false);
      assert.equal(store.get(UID)?.version, 1);
      if (tc.dropped) assert.match(r.dropped ?? '', tc.dropped);
      else assert.equal(r.dropped, undefined);
    });
  }

  it('startup merges into started, leaving the conditions', () => {
    const store = setUp({}, status({ containerStatuses: [running('app', { started: false })] }));
    const r = store.setContainerStartup(UID, 'app-id', true, T0 + S);
    assert.equal(r.changed, true);
    assert.equal(r.entry?.version, 2);
    assert.equal(r.entry?.status.containerStatuses?.[0]?.started, true);
    assert.deepEqual(r.entry?.status.conditions, store.get(UID)?.status.conditions);
    assert.equal(conditionOf(r.entry?.status, 'Ready')?.status, 'False');
  });

  it('startup from unset to false is a change (a pointer in Go)', () => {
    const store = setUp({}, status({ containerStatuses: [running('app', { started: undefined })] }));
    assert.equal(store.setContainerStartup(UID, 'app-id', false, T0 + S).changed, true);
  });

  it('a container is found by its full containerd:// ID too', () => {
    const store = setUp();
    assert.equal(store.setContainerReadiness(UID, 'containerd://app-id', true, T0 + S).changed, true);
  });
});

describe('PodStatusVersions: TerminatePod', () => {
  const UNKNOWN = { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated' };

  it('containers not terminated become 137 ContainerStatusUnknown; terminated ones stay; Running becomes Failed', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }), status({ containerStatuses: [running('a'), exited('b', 0), waiting('c', 'ContainerCreating')] }), T0);
    const r = store.terminatePod(UID, podOf({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }), {}, T0 + S);
    assert.equal(r.changed, true);
    assert.equal(r.entry?.version, 2);
    assert.equal(r.entry?.podIsFinished, true);
    assert.equal(r.entry?.status.phase, 'Failed');
    const byName = new Map(r.entry?.status.containerStatuses?.map((c) => [c.name, c.state]));
    assert.deepEqual(byName.get('a'), { terminated: UNKNOWN });
    assert.equal(byName.get('b')?.terminated?.reason, 'Completed');
    assert.deepEqual(byName.get('c'), { terminated: UNKNOWN });
  });

  it('a static pod keeps its phase (upstream #116484)', () => {
    const store = new PodStatusVersions();
    const pod = podOf({}, { annotations: { 'kubernetes.io/config.source': 'file' } });
    store.setPodStatus(UID, pod, status(), T0);
    const r = store.terminatePod(UID, pod, {}, T0 + S);
    assert.equal(r.entry?.status.phase, 'Running');
    assert.deepEqual(r.entry?.status.containerStatuses?.[0]?.state, { terminated: UNKNOWN });
  });

  it('an already terminal pod keeps its phase, and still gets a new version', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf({ restartPolicy: 'Never' }), status({ phase: 'Succeeded', containerStatuses: [exited('app', 0)] }), T0);
    const r = store.terminatePod(UID, podOf({ restartPolicy: 'Never' }), {}, T0 + S);
    assert.equal(r.changed, true);
    assert.equal(r.entry?.version, 2);
    assert.equal(r.entry?.status.phase, 'Succeeded');
  });

  it('a pod that never initialized: its waiting containers are left, the first init container is marked', () => {
    const store = new PodStatusVersions();
    const pod = podOf({ initContainers: [{ name: 'i1' }, { name: 'i2' }] });
    const s = status({ phase: 'Pending', initContainerStatuses: [waiting('i1', 'PodInitializing'), waiting('i2', 'PodInitializing')], containerStatuses: [waiting('app', 'PodInitializing')] });
    store.setPodStatus(UID, pod, s, T0);
    const r = store.terminatePod(UID, pod, {}, T0 + S);
    assert.deepEqual(r.entry?.status.initContainerStatuses?.map((c) => c.state), [{ terminated: UNKNOWN }, { waiting: { reason: 'PodInitializing' } }]);
    assert.deepEqual(r.entry?.status.containerStatuses?.[0]?.state, { waiting: { reason: 'PodInitializing' } });
    assert.equal(r.entry?.status.phase, 'Failed');
  });

  it('with nothing cached, the given status is the base', () => {
    const store = new PodStatusVersions();
    const r = store.terminatePod(UID, podOf(), status(), T0);
    assert.equal(r.entry?.version, 1);
    assert.deepEqual(r.entry?.status.containerStatuses?.[0]?.state, { terminated: UNKNOWN });
  });

  it('after TerminatePod a running status for the pod is refused', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf({ restartPolicy: 'Never' }), status(), T0);
    store.terminatePod(UID, podOf({ restartPolicy: 'Never' }), {}, T0 + S);
    const r = store.setPodStatus(UID, podOf({ restartPolicy: 'Never' }), status(), T0 + 2 * S);
    assert.equal(r.changed, false);
    assert.match(r.dropped ?? '', /is Failed/);
  });

  it('podIsFinished stays set on later updates', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf({ restartPolicy: 'Never' }), status(), T0);
    const terminated = store.terminatePod(UID, podOf({ restartPolicy: 'Never' }), {}, T0 + S).entry?.status;
    assert.ok(terminated);
    const r = store.setPodStatus(UID, podOf({ restartPolicy: 'Never' }), { ...terminated, message: 'bye' }, T0 + 2 * S);
    assert.equal(r.changed, true);
    assert.equal(r.entry?.podIsFinished, true);
  });
});

describe('PodStatusVersions: removal', () => {
  it('RemoveOrphanedStatuses forgets every UID not kept and says which', () => {
    const store = new PodStatusVersions();
    for (const uid of ['a', 'b', 'c']) store.setPodStatus(uid, podOf(), status(), T0);
    assert.deepEqual(store.removeOrphanedStatuses(new Set(['b'])), ['a', 'c']);
    assert.deepEqual(store.all().map(([uid]) => uid), ['b']);
    assert.equal(store.get('a'), undefined);
    assert.deepEqual(store.removeOrphanedStatuses(new Set(['b'])), []);
  });

  it('a removed UID starts again at version 1', () => {
    const store = new PodStatusVersions();
    store.setPodStatus(UID, podOf(), status({ phase: 'Pending' }), T0);
    store.setPodStatus(UID, podOf(), status(), T0);
    assert.equal(store.remove(UID), true);
    assert.equal(store.remove(UID), false);
    assert.equal(store.setPodStatus(UID, podOf(), status(), T0).entry?.version, 1);
  });

  it('statusPodOf takes name, namespace, spec, annotations and deletionTimestamp from a pod', () => {
    const pod = statusPodOf({ metadata: { name: 'n', namespace: 'ns', deletionTimestamp: at(T0), annotations: { a: 'b' } }, spec: spec() });
    assert.deepEqual(pod, { name: 'n', namespace: 'ns', spec: spec(), annotations: { a: 'b' }, deletionTimestamp: at(T0) });
    const entry: StatusEntry | undefined = new PodStatusVersions().setPodStatus(UID, pod, status(), T0).entry;
    assert.equal(entry?.version, 1);
  });
});
