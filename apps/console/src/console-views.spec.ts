import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { EventMessage, Pod, PodList } from '@app/contracts';
import { TRACE_RECORD_TYPE, type TraceRecord } from '@app/tracing';
import type { Connz, MonitoringSample } from '@app/nats';
import { ConsolePods } from './console-feed.js';
import { ConsoleTimelines, ConsoleTopology, NatsMonitoring, PodNotFoundError, PodTraces } from './console-views.js';

class ListedPods extends ConsolePods {
  constructor(private readonly items: Pod[]) {
    super();
  }
  listPods(): Promise<PodList> {
    return Promise.resolve({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: this.items });
  }
  onStatusChanged(): () => void {
    return () => undefined;
  }
  onEvent(_: (e: EventMessage) => void): () => void {
    return () => undefined;
  }
}

class FakePodTraces extends PodTraces {
  readonly asked: string[] = [];
  failWith: Error | undefined;
  constructor(private readonly byUid: Record<string, TraceRecord[]>) {
    super();
  }
  read(uid: string): Promise<TraceRecord[]> {
    this.asked.push(uid);
    if (this.failWith) return Promise.reject(this.failWith);
    return Promise.resolve(this.byUid[uid] ?? []);
  }
}

class FakeMonitoring extends NatsMonitoring {
  readonly samples: MonitoringSample[] = [];
  sample(): Promise<MonitoringSample> {
    const s = this.samples.shift();
    return s ? Promise.resolve(s) : Promise.reject(new Error('cannot reach NATS monitoring'));
  }
}

const T = 1_700_000_000_000;
const rec = (spanId: string, parentSpanId: string | undefined, at: number, durationMs: number, o: Partial<TraceRecord>): TraceRecord => ({
  type: TRACE_RECORD_TYPE, traceId: 't1', spanId, ...(parentSpanId ? { parentSpanId } : {}), kind: 'handle', podUid: 'uid-web', instance: 'x@n1#0', at: T + at, durationMs, ...o,
});
const web: Pod = { metadata: { name: 'web', namespace: 'default', uid: 'uid-web' }, spec: { containers: [] } };

describe('console: a pod\'s timeline', () => {
  const records = [
    rec('s3', 's2', 10, 200, { kind: 'cri', instance: 'pod-worker@n1#0', method: 'RunPodSandbox', subject: 'cri.n1.runtime.RunPodSandbox' }),
    rec('s1', undefined, 0, 0, { kind: 'publish', instance: 'config-source@n1#0', subject: 'kubelet.n1.config.add' }),
    rec('s2', 's1', 1, 300, { instance: 'pod-worker@n1#0', subject: 'kubelet.n1.work.0.uid-web' }),
  ];

  it('resolves the pod by namespace and name, reads its records by UID, and orders the hops', async () => {
    const traces = new FakePodTraces({ 'uid-web': records });
    const t = await new ConsoleTimelines(new ListedPods([web]), traces).timeline('default', 'web');
    assert.deepEqual(traces.asked, ['uid-web']);
    assert.equal(t.namespace, 'default');
    assert.equal(t.name, 'web');
    assert.deepEqual(t.hops.map((h) => [h.spanId, h.offsetMs]), [['s1', 0], ['s2', 1], ['s3', 10]]);
    assert.equal(t.hops[2]?.what, 'CRI RunPodSandbox');
    assert.equal(t.slowestSpanId, 's2');
    assert.equal(t.totalMs, 301);
  });

  it('a pod with no records yet has an empty timeline, not an error', async () => {
    const t = await new ConsoleTimelines(new ListedPods([web]), new FakePodTraces({})).timeline('default', 'web');
    assert.deepEqual(t.hops, []);
  });

  it('a pod the node does not have is PodNotFoundError, and no records are read', async () => {
    const traces = new FakePodTraces({ 'uid-web': records });
    await assert.rejects(new ConsoleTimelines(new ListedPods([web]), traces).timeline('other', 'web'), PodNotFoundError);
    assert.deepEqual(traces.asked, []);
  });

  it('a failed read is passed on (the route answers 503)', async () => {
    const traces = new FakePodTraces({});
    traces.failWith = new Error('permissions violation');
    await assert.rejects(new ConsoleTimelines(new ListedPods([web]), traces).timeline('default', 'web'), /permissions violation/);
  });
});

/** A /connz sample: config-source publishing pod updates that sync-loop subscribes to, on node n1, and a pleg on n2. */
function connz(now: number, syncInMsgs: number): Connz {
  return {
    now: new Date(now).toISOString(),
    connections: [
      { cid: 1, name: 'config-source@n1#0', in_msgs: 3, out_msgs: 0, in_bytes: 0, out_bytes: 0, subscriptions_list_detail: [{ subject: 'kubelet.n1.sources.snapshot', sid: '1', msgs: 0 }] },
      { cid: 2, name: 'sync-loop@n1#0', in_msgs: syncInMsgs, out_msgs: 0, in_bytes: 0, out_bytes: 0, subscriptions_list_detail: [{ subject: 'kubelet.n1.config.*', sid: '1', msgs: 5 }] },
      { cid: 3, name: 'pleg@n2#0', in_msgs: 0, out_msgs: 0, in_bytes: 0, out_bytes: 0, subscriptions_list_detail: [] },
      { cid: 4, name: 'kubelet-split-cli', in_msgs: 0, out_msgs: 0, in_bytes: 0, out_bytes: 0 },
    ],
  };
}

describe('console: the topology graph', () => {
  it('keeps this node\'s instances, with the edges publisher -> subscriber by family', async () => {
    const clock = new FakeClock(T);
    const monitoring = new FakeMonitoring();
    monitoring.samples.push({ connz: connz(T, 10), totals: { subscriptions: 7 } });
    const g = await new ConsoleTopology(monitoring, clock, 'n1').graph();
    assert.equal(g.node, 'n1');
    assert.deepEqual(g.instances.map((i) => i.name), ['config-source@n1#0', 'sync-loop@n1#0']);
    assert.deepEqual(g.edges, [
      { from: 'config-source#0', to: 'sync-loop#0', family: 'podUpdate', msgs: 5 },
      { from: 'sync-loop#0', to: 'config-source#0', family: 'sourcesSnapshot', msgs: 0 },
    ]);
    assert.equal(g.totals.subscriptions, 7);
    assert.equal(g.instances[1]?.inRate, 0, 'one sample: no rates yet');
  });

  it('rates come from the previous request\'s sample when it is recent, and not from a stale one', async () => {
    const clock = new FakeClock(T);
    const monitoring = new FakeMonitoring();
    const topology = new ConsoleTopology(monitoring, clock, 'n1', 60_000);
    monitoring.samples.push({ connz: connz(T, 10), totals: {} }, { connz: connz(T + 2000, 30), totals: {} }, { connz: connz(T + 2000 + 120_000, 50), totals: {} });
    await topology.graph();
    await clock.step(2000);
    assert.equal((await topology.graph()).instances.find((i) => i.service === 'sync-loop')?.inRate, 10);
    await clock.step(120_000);
    assert.equal((await topology.graph()).instances.find((i) => i.service === 'sync-loop')?.inRate, 0);
  });

  it('NATS monitoring out of reach is an error (the route answers 503)', async () => {
    await assert.rejects(new ConsoleTopology(new FakeMonitoring(), new FakeClock(T), 'n1').graph(), /cannot reach NATS monitoring/);
  });
});
