import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import { MessageTypes, type PodRecord, type PodStatus, type ProbeResultRecord, type ProbeResultValue, type ProbeType, type StatusCommandMessage, type StatusVerb } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { DesiredPods, ProbeResultsReader, StatusStore } from './ports.js';
import { StatusManager } from './status-manager.js';
import type { StatusEntry } from './pod-status-versions.js';

class MemoryStatusStore extends StatusStore {
  readonly entries = new Map<string, StatusEntry>();
  load(): Promise<[string, StatusEntry][]> {
    return Promise.resolve([...this.entries]);
  }
  put(uid: string, entry: StatusEntry): Promise<void> {
    this.entries.set(uid, structuredClone(entry));
    return Promise.resolve();
  }
  delete(uid: string): Promise<void> {
    this.entries.delete(uid);
    return Promise.resolve();
  }
}

/** A pods bucket that no longer holds the pod (it was removed before its last status call). */
class NoDesiredPods extends DesiredPods {
  all(): Promise<PodRecord[]> {
    return Promise.resolve([]);
  }
  get(): Promise<PodRecord | undefined> {
    return Promise.resolve(undefined);
  }
}

/** The prober's `probe-results` bucket in memory. */
class MemoryProbeResults extends ProbeResultsReader {
  constructor(readonly records: ProbeResultRecord[] = []) {
    super();
  }
  all(): Promise<ProbeResultRecord[]> {
    return Promise.resolve(structuredClone(this.records));
  }
}

const running: PodStatus = {
  phase: 'Running',
  containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 0, containerID: 'containerd://a', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }],
};

function call(verb: StatusVerb, args: Record<string, unknown>): [StatusVerb, StatusCommandMessage] {
  return [verb, { type: MessageTypes.statusCommand, podUid: 'uid-1', args: { podName: 'web-node', podNamespace: 'default', ...args } }];
}

describe('StatusManager: the last TerminatePod of a pod already gone from the pods bucket', () => {
  const cases = [
    { name: 'a static pod (its annotations sent with the call) keeps a non-terminal phase', annotations: { 'kubernetes.io/config.source': 'file' }, phase: 'Running' },
    { name: 'an API pod becomes Failed', annotations: undefined, phase: 'Failed' },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const manager = new StatusManager(new MemoryStatusStore(), new NoDesiredPods(), new MemoryProbeResults(), new FakeClock(), silentLogger());
      const extra = tc.annotations ? { podAnnotations: tc.annotations } : {};
      await manager.handleCommand(...call('SetPodStatus', { status: running, ...extra }));
      const r = await manager.handleCommand(...call('TerminatePod', { status: running, ...extra }));
      assert.equal(r?.entry?.status.phase, tc.phase);
    });
  }

  it('a static pod added again with the same UID is Running again', async () => {
    const manager = new StatusManager(new MemoryStatusStore(), new NoDesiredPods(), new MemoryProbeResults(), new FakeClock(), silentLogger());
    const podAnnotations = { 'kubernetes.io/config.source': 'file' };
    await manager.handleCommand(...call('TerminatePod', { status: running, podAnnotations }));
    const again: PodStatus = { ...running, containerStatuses: [{ ...running.containerStatuses![0]!, containerID: 'containerd://b' }] };
    const r = await manager.handleCommand(...call('SetPodStatus', { status: again, podAnnotations }));
    assert.equal(r?.dropped, undefined);
    assert.equal(r?.entry?.status.phase, 'Running');
    assert.equal(r?.entry?.status.containerStatuses?.[0]?.containerID, 'containerd://b');
  });
});

describe('StatusManager.restore: the prober\'s kept results merged into the restored statuses', () => {
  const T0 = Date.UTC(2026, 0, 1);
  const restored = (ready: boolean, started: boolean): StatusEntry => ({
    version: 7,
    podName: 'web-node',
    podNamespace: 'default',
    status: {
      ...running,
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
      containerStatuses: [{ ...running.containerStatuses![0]!, ready, started }],
    },
  });
  const kept = (probeType: ProbeType, result: ProbeResultValue, containerId = 'a'): ProbeResultRecord => ({ podUid: 'uid-1', containerName: 'main', probeType, containerId, result, time: T0 });
  const cases: { name: string; entry: StatusEntry; results: ProbeResultRecord[]; ready: boolean; started: boolean; version: number }[] = [
    { name: 'a readiness failure sent while no status manager listened: not Ready', entry: restored(true, true), results: [kept('readiness', 'Failure')], ready: false, started: true, version: 8 },
    { name: 'a readiness success sent while no status manager listened: Ready', entry: restored(false, true), results: [kept('readiness', 'Success')], ready: true, started: true, version: 8 },
    { name: 'a startup success sent while no status manager listened: started', entry: restored(false, false), results: [kept('startup', 'Success')], ready: false, started: true, version: 8 },
    { name: 'results that agree: no new version', entry: restored(true, true), results: [kept('readiness', 'Success'), kept('startup', 'Success')], ready: true, started: true, version: 7 },
    { name: 'a result for another container (the one before a restart): no change', entry: restored(true, true), results: [kept('readiness', 'Failure', 'old')], ready: true, started: true, version: 7 },
    { name: 'a liveness result is not the status manager\'s', entry: restored(true, true), results: [kept('liveness', 'Failure')], ready: true, started: true, version: 7 },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const store = new MemoryStatusStore();
      store.entries.set('uid-1', tc.entry);
      const manager = new StatusManager(store, new NoDesiredPods(), new MemoryProbeResults(tc.results), new FakeClock(T0), silentLogger());
      assert.equal(await manager.restore(), 1);
      const entry = manager.statuses().find(([uid]) => uid === 'uid-1')?.[1];
      const cs = entry?.status.containerStatuses?.[0];
      assert.deepEqual([cs?.ready, cs?.started], [tc.ready, tc.started]);
      assert.equal(entry?.status.conditions?.find((c) => c.type === 'Ready')?.status, tc.ready ? 'True' : 'False');
      assert.equal(entry?.version, tc.version);
      assert.deepEqual(store.entries.get('uid-1'), entry, 'what is served is what is stored');
    });
  }

  it('a result for a pod with no status is left for its first SetPodStatus', async () => {
    const store = new MemoryStatusStore();
    const manager = new StatusManager(store, new NoDesiredPods(), new MemoryProbeResults([{ ...kept('readiness', 'Success'), podUid: 'uid-2' }]), new FakeClock(T0), silentLogger());
    assert.equal(await manager.restore(), 0);
    assert.deepEqual(manager.statuses(), []);
  });
});

describe('StatusManager: a container killed for memory is reported once', () => {
  it('the listener hears the kill when the status first shows it, not again on the next status', async () => {
    const manager = new StatusManager(new MemoryStatusStore(), new NoDesiredPods(), new MemoryProbeResults(), new FakeClock(), silentLogger());
    const heard: string[] = [];
    manager.onOomKilled((uid, pod, kill) => void heard.push(`${uid} ${pod.namespace}/${pod.name} ${kill.container} ${kill.containerId}`));
    await manager.handleCommand(...call('SetPodStatus', { status: running }));
    const killed: PodStatus = {
      phase: 'Running',
      containerStatuses: [{ ...running.containerStatuses![0]!, ready: false, state: { terminated: { exitCode: 137, reason: 'OOMKilled', containerID: 'containerd://a' } } }],
    };
    await manager.handleCommand(...call('SetPodStatus', { status: killed }));
    const restarted: PodStatus = {
      phase: 'Running',
      containerStatuses: [{ ...running.containerStatuses![0]!, containerID: 'containerd://b', restartCount: 1, lastState: killed.containerStatuses![0]!.state! }],
    };
    await manager.handleCommand(...call('SetPodStatus', { status: restarted }));
    assert.deepEqual(heard, ['uid-1 default/web-node main containerd://a']);
  });

  it('the kill is told (and waited for) before the status that shows it is saved: a status manager dying between the two leaves the status unsaved, not the event unsent', async () => {
    const order: string[] = [];
    const store = new (class extends MemoryStatusStore {
      override put(uid: string, entry: StatusEntry): Promise<void> {
        order.push(`put ${entry.status.containerStatuses?.[0]?.state?.terminated?.reason ?? entry.status.phase ?? ''}`);
        return super.put(uid, entry);
      }
    })();
    const clock = new FakeClock();
    const manager = new StatusManager(store, new NoDesiredPods(), new MemoryProbeResults(), clock, silentLogger());
    manager.onOomKilled(async (_uid, _pod, kill) => {
      await new Promise((r) => setImmediate(r));
      order.push(`event ${kill.containerId}`);
    });
    await manager.handleCommand(...call('SetPodStatus', { status: running }));
    const killed: PodStatus = {
      phase: 'Running',
      containerStatuses: [{ ...running.containerStatuses![0]!, ready: false, state: { terminated: { exitCode: 137, reason: 'OOMKilled', containerID: 'containerd://a' } } }],
    };
    await manager.handleCommand(...call('SetPodStatus', { status: killed }));
    assert.deepEqual(order, ['put Running', 'event containerd://a', 'put OOMKilled']);
  });
});
