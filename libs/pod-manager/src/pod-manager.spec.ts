/** The podManager's bucket and the read model of `/pods`, on a fake bucket and a fake clock. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { PodRecord, PodStatus, ProbeResultRecord } from '@app/contracts';
import { FakeKv } from '@app/nats/testing';
import { silentLogger } from '@app/observability';
import { KvPodManager, KvPodReadModel, podManagerKey, podWithStatus, withProbeResults } from './index.js';
import { FakePodManager, FakePodReadModel } from './testing.js';

const record = (uid: string, name: string, extra: Partial<PodRecord> = {}): PodRecord => ({ pod: { metadata: { uid, name, namespace: 'default' }, spec: { containers: [] } }, source: 'file', addedAt: 1, admitted: true, ...extra });

describe('KvPodManager', () => {
  it('lists and gets the sync loop\'s pods of its node, at <node>.pod.<uid>, and nothing else of the bucket', async () => {
    const kv = new FakeKv('pods');
    const rec = record('u1', 'p');
    await kv.put(podManagerKey('node-a', 'u1'), JSON.stringify(rec));
    await kv.put('node-a.queue.u1', JSON.stringify({ dueAt: 1 }));
    await kv.put(podManagerKey('node-b', 'u9'), JSON.stringify(record('u9', 'other')));
    const pods = new KvPodManager(kv, 'node-a');
    assert.deepEqual(await pods.all(), [rec]);
    assert.deepEqual(await pods.get('u1'), rec);
    assert.equal(await pods.get('u2'), undefined);
  });
});

describe('podWithStatus: a desired pod as /pods serves it', () => {
  const cases = [
    { name: 'its stored status', rec: record('u1', 'a'), status: { phase: 'Running' as const }, want: 'Running' },
    { name: 'no status yet: Pending', rec: record('u1', 'a'), status: undefined, want: 'Pending' },
    { name: 'rejected by admission, no status: Failed with the reason', rec: record('u1', 'a', { admitted: false, rejection: { reason: 'OutOfcpu', message: 'no cpu' } }), status: undefined, want: 'Failed' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const pod = podWithStatus(tc.rec, tc.status);
      assert.equal(pod.status?.phase, tc.want);
      assert.equal(pod.kind, 'Pod');
      if (tc.rec.rejection) assert.match(pod.status?.message ?? '', /Pod was rejected: no cpu/);
    });
  }
});

describe('KvPodReadModel', () => {
  it('joins pods and pod-status, follows both buckets by their watches, and tells its listeners', async () => {
    const pods = new FakeKv('pods');
    const statuses = new FakeKv('pod-status');
    await pods.put(podManagerKey('node-a', 'u2'), JSON.stringify(record('u2', 'b')));
    await pods.put(podManagerKey('node-a', 'u1'), JSON.stringify(record('u1', 'a')));
    await statuses.put('node-a.u1', JSON.stringify({ version: 3, podName: 'a', podNamespace: 'default', status: { phase: 'Running' } }));
    const model = new KvPodReadModel({ pods, podStatus: statuses, node: 'node-a', clock: new FakeClock(), logger: silentLogger() });
    const changed: (string | undefined)[] = [];
    model.onChange((uid) => changed.push(uid));
    try {
      const list = await model.listPods();
      assert.deepEqual(list.items.map((p) => `${p.metadata.name ?? ''}:${p.status?.phase ?? ''}`), ['a:Running', 'b:Pending'], 'in name order, each with its status');
      await statuses.put('node-a.u2', JSON.stringify({ version: 1, podName: 'b', podNamespace: 'default', status: { phase: 'Succeeded' } }));
      await pods.delete(podManagerKey('node-a', 'u1'));
      for (let i = 0; i < 50 && !(changed.includes('u2') && changed.includes('u1')); i++) await new Promise((r) => setImmediate(r));
      assert.deepEqual((await model.listPods()).items.map((p) => `${p.metadata.name ?? ''}:${p.status?.phase ?? ''}`), ['b:Succeeded']);
      assert.equal((await model.getPod('default', 'b'))?.status?.phase, 'Succeeded');
      assert.equal(await model.getPod('default', 'a'), undefined);
      assert.ok(changed.includes('u2') && changed.includes('u1'), `listeners told: ${JSON.stringify(changed)}`);
      assert.deepEqual(statuses.calls.filter((c) => !c.startsWith('watch') && !c.startsWith('put')), [], 'a read loads nothing and writes nothing');
    } finally {
      model.stop();
    }
  });
});

describe('the prober\'s results on a stored status (withProbeResults, as the status manager lays them)', () => {
  const spec = { containers: [{ name: 'web', readinessProbe: { exec: { command: ['true'] } } }] };
  const ready = (ok: boolean): PodStatus => ({
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: ok ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'ContainersReady', status: ok ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
    containerStatuses: [{ name: 'web', containerID: 'containerd://c1', ready: ok, started: true, restartCount: 0, image: 'i', imageID: 'i', state: { running: {} } }],
  });
  const result = (probeType: ProbeResultRecord['probeType'], value: ProbeResultRecord['result'], containerId = 'c1'): ProbeResultRecord => ({ podUid: 'u1', containerName: 'web', probeType, containerId, result: value, time: 1 });
  const NOW = Date.parse('2026-06-01T00:00:00Z');
  const cases: { name: string; status: PodStatus; results: ProbeResultRecord[]; ready: string; since: string }[] = [
    { name: 'a failed readiness result the status has not: NotReady, the conditions moved now', status: ready(true), results: [result('readiness', 'Failure')], ready: 'False', since: '2026-06-01T00:00:00Z' },
    { name: 'a passed readiness result: Ready', status: ready(false), results: [result('readiness', 'Success')], ready: 'True', since: '2026-06-01T00:00:00Z' },
    { name: 'the result the status has already: the status as stored', status: ready(true), results: [result('readiness', 'Success')], ready: 'True', since: '2026-01-01T00:00:00Z' },
    { name: 'a result for another container (an earlier instance): ignored', status: ready(true), results: [result('readiness', 'Failure', 'c0')], ready: 'True', since: '2026-01-01T00:00:00Z' },
    { name: 'a liveness result: not readiness', status: ready(true), results: [result('liveness', 'Failure')], ready: 'True', since: '2026-01-01T00:00:00Z' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const out = withProbeResults(tc.status, spec, tc.results, NOW);
      const cond = out.conditions?.find((c) => c.type === 'Ready');
      assert.equal(cond?.status, tc.ready);
      assert.equal(cond?.lastTransitionTime, tc.since);
      assert.equal(out.containerStatuses?.[0]?.ready, tc.ready === 'True');
    });
  }

  it('KvPodReadModel with the probe-results bucket serves a result no status manager has saved yet', async () => {
    const pods = new FakeKv('pods');
    const statuses = new FakeKv('pod-status');
    const probeResults = new FakeKv('probe-results');
    await pods.put(podManagerKey('node-a', 'u1'), JSON.stringify({ ...record('u1', 'a'), pod: { metadata: { uid: 'u1', name: 'a', namespace: 'default' }, spec } }));
    await statuses.put('node-a.u1', JSON.stringify({ version: 3, podName: 'a', podNamespace: 'default', status: ready(true) }));
    await probeResults.put('node-a.u1.web.readiness', JSON.stringify(result('readiness', 'Failure')));
    const model = new KvPodReadModel({ pods, podStatus: statuses, probeResults, node: 'node-a', clock: new FakeClock(NOW), logger: silentLogger() });
    try {
      const pod = (await model.listPods()).items[0];
      assert.equal(pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
      assert.equal(pod?.status?.containerStatuses?.[0]?.ready, false);
    } finally {
      model.stop();
    }
  });
});

describe('the fakes', () => {
  it('FakePodReadModel serves the FakePodManager\'s records with the statuses set, and FakePodManager fails when told', async () => {
    const model = new FakePodReadModel(new FakePodManager([record('u1', 'a')]));
    model.statuses.set('u1', { phase: 'Running' });
    assert.equal((await model.getPod('default', 'a'))?.status?.phase, 'Running');
    model.pods.failNext();
    await assert.rejects(model.listPods(), /pods bucket unreachable/);
  });
});
