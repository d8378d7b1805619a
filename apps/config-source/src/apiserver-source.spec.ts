import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { Pod, PodOperation, PodUpdateMessage } from '@app/contracts';
import { NatsEventRecorder } from '@app/nats';
import { silentLogger } from '@app/observability';
import { NatsPodUpdateOutbox } from './adapters/nats-pod-update-outbox.js';
import { ReflectorApiserverPods } from './adapters/reflector-apiserver-pods.js';
import { ApiserverSource } from './apiserver-source.js';
import { PodConfigPublisher } from './pod-config-publisher.js';
import { ConfigMetrics } from './ports.js';
import { FakeApiserver } from './testing.js';

const NODE = 'node-a';

function apiPod(name: string, patch: { image?: string; labels?: Record<string, string>; node?: string; uid?: string; phase?: 'Pending' | 'Running'; annotations?: Record<string, string> } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      ...(patch.uid ? { uid: patch.uid } : {}),
      ...(patch.labels ? { labels: patch.labels } : {}),
      ...(patch.annotations ? { annotations: patch.annotations } : {}),
      managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }],
    },
    spec: { nodeName: patch.node ?? NODE, containers: [{ name: 'c', image: patch.image ?? 'busybox:1' }], terminationGracePeriodSeconds: 30 },
    status: { phase: patch.phase ?? 'Pending' },
  };
}

class Bus {
  sent: { subject: string; payload: unknown }[] = [];
  publish(subject: string, payload: unknown): void {
    this.sent.push({ subject, payload });
  }
  updates(): PodUpdateMessage[] {
    return this.sent.filter((s) => /\.config\.(add|update|remove|reconcile|delete)$/.test(s.subject)).map((s) => s.payload as PodUpdateMessage);
  }
  /** `op:name(uid)` for every pod of every PodUpdate, in order. */
  ops(): string[] {
    return this.updates().flatMap((u) => u.pods.map((p) => `${u.op}:${p.metadata.name ?? ''}(${p.metadata.uid ?? ''})`));
  }
  readies(): number {
    return this.sent.filter((s) => s.subject === `kubelet.${NODE}.config.ready`).length;
  }
}

class RecordingMetrics extends ConfigMetrics {
  readonly ops = new Map<string, number>();
  problems(): void {}
  operations(source: string, op: PodOperation, count: number): void {
    this.ops.set(`${source}/${op}`, (this.ops.get(`${source}/${op}`) ?? 0) + count);
  }
}

/** The apiserver source on a fake apiserver, the real Reflector on a fake clock, publishing on a recording bus. */
function setup() {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const api = new FakeApiserver();
  const bus = new Bus();
  const metrics = new RecordingMetrics();
  const publisher = new PodConfigPublisher(new NatsPodUpdateOutbox(bus, NODE), new NatsEventRecorder(bus, NODE, clock), clock, silentLogger(), ['api'], metrics);
  const source = new ApiserverSource(NODE, new ReflectorApiserverPods(api, clock, silentLogger()), silentLogger(), publisher.onListing);
  return { clock, api, bus, metrics, publisher, start: () => publisher.start([source]), stop: () => publisher.stop() };
}

describe('ApiserverSource: the API pods of this node as PodConfig operations', () => {
  const cases: { name: string; before?: Pod[]; change: (api: FakeApiserver) => void; want: string[] }[] = [
    { name: 'a pod bound to the node: ADD', change: (api) => void api.put(apiPod('web')), want: ['add:web(uid-web)'] },
    { name: 'a pod bound to another node: nothing', change: (api) => void api.put(apiPod('elsewhere', { node: 'node-b' })), want: [] },
    { name: 'its spec changed: UPDATE', before: [apiPod('web')], change: (api) => void api.put(apiPod('web', { image: 'busybox:2' })), want: ['update:web(uid-web)'] },
    { name: 'its labels changed: UPDATE', before: [apiPod('web')], change: (api) => void api.put(apiPod('web', { labels: { tier: 'front' } })), want: ['update:web(uid-web)'] },
    { name: 'only its status changed: RECONCILE', before: [apiPod('web')], change: (api) => void api.put(apiPod('web', { phase: 'Running' })), want: ['reconcile:web(uid-web)'] },
    {
      name: 'only its resourceVersion and managedFields changed: nothing',
      before: [apiPod('web')],
      change: (api) => {
        const p = apiPod('web');
        api.put({ ...p, metadata: { ...p.metadata, managedFields: [] } });
      },
      want: [],
    },
    {
      name: 'deleted gracefully (deletionTimestamp set): DELETE',
      before: [apiPod('web')],
      change: (api) => {
        const p = apiPod('web');
        api.put({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:07Z', deletionGracePeriodSeconds: 7 } });
      },
      want: ['delete:web(uid-web)'],
    },
    { name: 'the object gone: REMOVE', before: [apiPod('web')], change: (api) => api.remove('default', 'web'), want: ['remove:web(uid-web)'] },
    {
      name: 'deleted and created again with the same name: REMOVE of the old UID, ADD of the new',
      before: [apiPod('web')],
      change: (api) => {
        api.remove('default', 'web');
        api.put(apiPod('web', { uid: 'uid-web-2' }));
      },
      want: ['remove:web(uid-web)', 'add:web(uid-web-2)'],
    },
    {
      name: 'a mirror pod (kubernetes.io/config.mirror): nothing, it is not a pod to run',
      change: (api) => void api.put(apiPod('static-node-a', { annotations: { 'kubernetes.io/config.mirror': 'abc', 'kubernetes.io/config.source': 'file' } })),
      want: [],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { clock, api, bus, start, stop } = setup();
      for (const p of tc.before ?? []) api.put(p);
      start();
      await clock.step(0);
      assert.equal(bus.updates().length, (tc.before ?? []).length > 0 ? 1 : 0, 'the first list ADDs what is there');
      bus.sent = [];
      tc.change(api);
      await clock.step(0);
      assert.deepEqual(bus.ops(), tc.want);
      stop();
    });
  }

  it('a DELETE carries the pod deletionGracePeriodSeconds; pods carry config.source "api" and config.seen, wire JSON without managedFields', async () => {
    const { clock, api, bus, start, stop } = setup();
    api.put(apiPod('web'));
    start();
    await clock.step(0);
    const added = bus.updates()[0]?.pods[0];
    assert.equal(bus.updates()[0]?.source, 'api');
    assert.equal(added?.metadata.annotations?.['kubernetes.io/config.source'], 'api');
    assert.equal(added?.metadata.annotations?.['kubernetes.io/config.seen'], '2026-01-01T00:00:00.000Z');
    assert.equal(added?.metadata.managedFields, undefined);
    assert.equal(added?.metadata.resourceVersion, '101');
    assert.equal(added?.kind, 'Pod');
    await clock.step(5_000);
    const p = apiPod('web');
    api.put({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:12Z', deletionGracePeriodSeconds: 7 } });
    await clock.step(0);
    const deleted = bus.updates().at(-1);
    assert.equal(deleted?.op, 'delete');
    assert.equal(deleted?.pods[0]?.metadata.deletionGracePeriodSeconds, 7);
    assert.equal(deleted?.pods[0]?.metadata.annotations?.['kubernetes.io/config.seen'], '2026-01-01T00:00:00.000Z', 'first seen stays');
    stop();
  });

  it('lists and watches the pods bound to this node, in every namespace', async () => {
    const { clock, api, start, stop } = setup();
    start();
    await clock.step(0);
    assert.deepEqual(api.calls, ['LIST /api/v1/pods {"fieldSelector":"spec.nodeName=node-a"}', 'WATCH /api/v1/pods rv=100']);
    stop();
  });

  it('sourcesReady waits for the first list: not while the apiserver cannot be reached, at once when it answers', async () => {
    const { clock, api, bus, publisher, start, stop } = setup();
    api.stop();
    start();
    await clock.step(10_000);
    assert.equal(bus.readies(), 0);
    assert.deepEqual(publisher.snapshot().sources, [{ source: 'api', ready: false, pods: [] }]);
    api.start();
    await clock.step(30_000);
    assert.equal(bus.readies(), 1, 'ready after the first list, even an empty one');
    assert.equal(publisher.snapshot().sources[0]?.ready, true);
    stop();
  });

  it('the apiserver away: nothing is removed; back, only what changed meanwhile (one created, one deleted) comes out', async () => {
    const { clock, api, bus, publisher, start, stop } = setup();
    api.put(apiPod('kept'));
    api.put(apiPod('doomed'));
    start();
    await clock.step(0);
    bus.sent = [];
    api.stop();
    await clock.step(60_000);
    assert.deepEqual(bus.ops(), []);
    assert.deepEqual(publisher.snapshot().sources[0]?.pods.map((p) => p.metadata.name).sort(), ['doomed', 'kept'], 'the last view stands');
    // Changes while this node's watch is cut (another client, or etcd before the apiserver restart).
    api.start();
    api.remove('default', 'doomed');
    api.put(apiPod('new'));
    api.stop();
    await clock.step(60_000);
    assert.deepEqual(bus.ops(), []);
    api.start();
    await clock.step(30_000);
    assert.deepEqual(bus.ops(), ['remove:doomed(uid-doomed)', 'add:new(uid-new)']);
    stop();
  });

  it('a watch whose resourceVersion was compacted (410 Gone) lists again and publishes the difference', async () => {
    const { clock, api, bus, start, stop } = setup();
    api.put(apiPod('a'));
    api.put(apiPod('b'));
    start();
    await clock.step(0);
    bus.sent = [];
    api.stop();
    api.start();
    api.remove('default', 'a');
    api.put(apiPod('b', { phase: 'Running' }));
    api.compact();
    await clock.step(30_000);
    assert.deepEqual(bus.ops(), ['remove:a(uid-a)', 'reconcile:b(uid-b)']);
    assert.ok(api.calls.filter((c) => c.startsWith('LIST')).length >= 2, 'listed again');
    stop();
  });

  it('counts the published operations with source="api"', async () => {
    const { clock, api, metrics, start, stop } = setup();
    api.put(apiPod('a'));
    api.put(apiPod('b'));
    start();
    await clock.step(0);
    api.remove('default', 'a');
    await clock.step(0);
    assert.deepEqual(Object.fromEntries(metrics.ops), { 'api/add': 2, 'api/remove': 1 });
    stop();
  });

  it('stop() ends the watch: nothing is published afterwards', async () => {
    const { clock, api, bus, start, stop } = setup();
    start();
    await clock.step(0);
    stop();
    bus.sent = [];
    api.put(apiPod('late'));
    await clock.step(60_000);
    assert.deepEqual(bus.sent, []);
  });
});
