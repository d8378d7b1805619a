import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '@app/clock/testing';
import type { PodRecord, PodStatus, PodSyncStatusRecord } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { ContainerGarbageCollector, DEFAULT_GC_POLICY, deadLogLinksToRemove, decideContainerGC, podUidOfLogDirectory, type GCPolicy, type GcContainer, type GcSandbox } from './container-gc.js';
import { FakeNodeState, FakePodLogs, FakeRuntimeView } from '../testing.js';

const NOW = 1_000_000;
const rec = (uid: string, extra: Partial<PodRecord> = {}): [string, PodRecord] => [uid, { pod: { metadata: { uid, name: uid, namespace: 'default' }, spec: { containers: [] } }, source: 'file', addedAt: 100, admitted: true, ...extra }];
/** A container `<pod>/<name>#<n>` created at n (seconds), dead unless `running`. */
const ctr = (pod: string, name: string, n: number, running = false, sandbox = `${pod}-sb1`): GcContainer => ({ id: `${pod}/${name}#${n}`, podUid: pod, name, sandboxId: sandbox, running, createdAt: n * 1000 });
const sb = (pod: string, n: number, ready = false): GcSandbox => ({ id: `${pod}-sb${n}`, podUid: pod, ready, createdAt: n * 1000 });

describe('decideContainerGC', () => {
  const cases: {
    name: string;
    desired?: [string, PodRecord][];
    workers?: [string, PodSyncStatusRecord][];
    statuses?: [string, PodStatus][];
    containers?: GcContainer[];
    sandboxes?: GcSandbox[];
    logDirectories?: string[];
    policy?: Partial<GCPolicy>;
    allSourcesReady?: boolean;
    want: { containers?: string[]; sandboxes?: string[]; logDirectories?: string[] };
  }[] = [
    {
      name: 'a crash loop keeps the newest dead instance per container name and the running one',
      desired: [rec('a')],
      containers: [ctr('a', 'app', 1), ctr('a', 'app', 2), ctr('a', 'app', 3), ctr('a', 'app', 4, true), ctr('a', 'side', 1), ctr('a', 'side', 2)],
      sandboxes: [sb('a', 1, true)],
      want: { containers: ['a/app#2', 'a/app#1', 'a/side#1'] },
    },
    { name: 'a dead container younger than MinAge is kept', desired: [rec('a')], containers: [ctr('a', 'app', 999), ctr('a', 'app', 1000)], policy: { minAgeMs: 5000 }, want: {} },
    { name: 'MaxPerPodContainer -1 keeps every dead container', desired: [rec('a')], containers: [ctr('a', 'app', 1), ctr('a', 'app', 2)], policy: { maxPerPodContainer: -1 }, want: {} },
    {
      name: 'MaxContainers removes the oldest node-wide beyond it',
      desired: [rec('a'), rec('b')],
      containers: [ctr('a', 'app', 1), ctr('a', 'app', 5), ctr('b', 'app', 3), ctr('b', 'other', 2)],
      policy: { maxPerPodContainer: -1, maxContainers: 2 },
      want: { containers: ['a/app#1', 'b/other#2'] },
    },
    {
      name: 'a deleted pod loses every dead container, its sandboxes and its log directory',
      containers: [ctr('gone', 'app', 1), ctr('gone', 'app', 2)],
      sandboxes: [sb('gone', 1), sb('gone', 2)],
      logDirectories: ['default_gone_gone', 'default_a_a'],
      desired: [rec('a')],
      want: { containers: ['gone/app#2', 'gone/app#1'], sandboxes: ['gone-sb2', 'gone-sb1'], logDirectories: ['default_gone_gone'] },
    },
    {
      name: 'a deleted pod whose worker finished is collected',
      workers: [['gone', { terminatingAt: 1, terminatedAt: 2, finished: true }]],
      sandboxes: [sb('gone', 1)],
      logDirectories: ['default_gone_gone'],
      want: { sandboxes: ['gone-sb1'], logDirectories: ['default_gone_gone'] },
    },
    {
      name: 'a deleted pod its worker is terminating is the worker\'s',
      workers: [['gone', { terminatingAt: 1 }]],
      containers: [ctr('gone', 'app', 1), ctr('gone', 'app', 2)],
      sandboxes: [sb('gone', 1), sb('gone', 2)],
      logDirectories: ['default_gone_gone'],
      want: {},
    },
    {
      name: 'a deleted pod terminated but not finished (its sandboxes being removed) is the worker\'s',
      workers: [['gone', { terminatingAt: 1, terminatedAt: 2 }]],
      sandboxes: [sb('gone', 1)],
      logDirectories: ['default_gone_gone'],
      want: {},
    },
    {
      name: 'an evicted pod still in the API, its worker finished: everything goes (ShouldPodContentBeRemoved: IsEvicted)',
      desired: [rec('ev')],
      workers: [['ev', { terminatingAt: 1, terminatedAt: 2, finished: true }]],
      statuses: [['ev', { phase: 'Failed', reason: 'Evicted' }]],
      containers: [ctr('ev', 'app', 1)],
      sandboxes: [sb('ev', 1)],
      want: { containers: ['ev/app#1'], sandboxes: ['ev-sb1'] },
    },
    {
      name: 'a finished pod still in the API (Succeeded) keeps its dead container and its sandbox',
      desired: [rec('done')],
      workers: [['done', { terminatingAt: 1, terminatedAt: 2, finished: true }]],
      statuses: [['done', { phase: 'Succeeded' }]],
      containers: [ctr('done', 'app', 1)],
      sandboxes: [sb('done', 1)],
      want: {},
    },
    {
      name: 'a desired pod whose termination was requested is the worker\'s',
      desired: [rec('t', { terminationRequested: true })],
      workers: [['t', { syncedAt: 1 }]],
      containers: [ctr('t', 'app', 1), ctr('t', 'app', 2)],
      want: {},
    },
    {
      name: 'nothing is judged deleted before every source has delivered',
      allSourcesReady: false,
      containers: [ctr('gone', 'app', 1)],
      sandboxes: [sb('gone', 1)],
      logDirectories: ['default_gone_gone'],
      want: {},
    },
    {
      name: 'a deleted pod with a running container keeps it, its sandbox and its logs (housekeeping kills it first)',
      containers: [ctr('gone', 'app', 1), ctr('gone', 'app', 2, true)],
      sandboxes: [sb('gone', 1, true)],
      logDirectories: ['default_gone_gone'],
      want: { containers: ['gone/app#1'] },
    },
    {
      name: 'a desired pod keeps its newest sandbox and the ones with containers; older empty not-ready ones go',
      desired: [rec('a')],
      containers: [ctr('a', 'app', 5, false, 'a-sb2')],
      sandboxes: [sb('a', 1), sb('a', 2), sb('a', 3)],
      want: { sandboxes: ['a-sb1'] },
    },
    {
      name: 'a ready sandbox is never removed',
      desired: [rec('a')],
      sandboxes: [sb('a', 1, true), sb('a', 2)],
      want: {},
    },
    { name: 'a log directory of a desired pod, or not named as a pod\'s, is kept', desired: [rec('a')], logDirectories: ['default_a_a', 'lost+found'], want: {} },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const d = decideContainerGC({
        policy: { ...DEFAULT_GC_POLICY, ...tc.policy },
        now: NOW,
        allSourcesReady: tc.allSourcesReady ?? true,
        desired: new Map(tc.desired ?? []),
        workers: new Map(tc.workers ?? []),
        statuses: new Map(tc.statuses ?? []),
        containers: tc.containers ?? [],
        sandboxes: tc.sandboxes ?? [],
        logDirectories: tc.logDirectories ?? [],
      });
      assert.deepEqual(
        { containers: d.removeContainers.map((c) => c.id).sort(), sandboxes: d.removeSandboxes.map((s) => s.id).sort(), logDirectories: d.removeLogDirectories },
        { containers: [...(tc.want.containers ?? [])].sort(), sandboxes: [...(tc.want.sandboxes ?? [])].sort(), logDirectories: tc.want.logDirectories ?? [] },
      );
    });
  }

  it('reads the UID from a log directory name', () => {
    assert.equal(podUidOfLogDirectory('kube-system_web-node-a_0b1c'), '0b1c');
    assert.equal(podUidOfLogDirectory('lost+found'), undefined);
  });
});

describe('ContainerGarbageCollector', () => {
  it('removes the chosen containers with their log files, the sandboxes and the log directories', async () => {
    const runtime = new FakeRuntimeView();
    runtime.gcContainers = [ctr('a', 'app', 1), ctr('a', 'app', 2)];
    runtime.gcSandboxes = [sb('a', 1, true), sb('gone', 1)];
    const logs = new FakePodLogs();
    logs.dirs = ['default_a_a', 'default_gone_gone'];
    const gc = new ContainerGarbageCollector({ runtime, logs, nodeState: new FakeNodeState(), clock: new FakeClock(NOW), logger: silentLogger() });
    await gc.garbageCollect(new Map([rec('a')]), true);
    assert.deepEqual(runtime.removed, ['a/app#1']);
    assert.deepEqual(logs.removedLogs, ['/logs/a/app#1.log']);
    assert.deepEqual(logs.removedLinks, ['p_ns_c-a/app#1-a/app#1.log'], 'the removed container\'s /var/log/containers link goes with its log');
    assert.deepEqual(runtime.removedSandboxes, ['gone-sb1']);
    assert.deepEqual(logs.dirs, ['default_a_a']);
  });

  it('goes on after a removal fails', async () => {
    const runtime = new FakeRuntimeView();
    runtime.gcContainers = [ctr('gone', 'app', 1), ctr('gone', 'web', 1)];
    const failing = runtime.removeContainer.bind(runtime);
    runtime.removeContainer = (id) => (id === 'gone/app#1' ? Promise.reject(new Error('NotFound')) : failing(id));
    const gc = new ContainerGarbageCollector({ runtime, logs: new FakePodLogs(), nodeState: new FakeNodeState(), clock: new FakeClock(NOW), logger: silentLogger() });
    await gc.garbageCollect(new Map(), true);
    assert.deepEqual(runtime.removed, ['gone/web#1']);
  });

  it('removes the /var/log/containers links whose log file is gone, but a running container\'s (its log is being rotated)', async () => {
    const runtime = new FakeRuntimeView();
    runtime.gcContainers = [ctr('a', 'app', 1, true)];
    const logs = new FakePodLogs();
    logs.links.set('a_default_app-runningid.log', { containerId: 'a/app#1', dead: true });
    logs.links.set('b_default_app-deadid.log', { containerId: 'deadid', dead: true });
    logs.links.set('c_default_app-liveid.log', { containerId: 'liveid', dead: false });
    logs.links.set('junk.log', { dead: true });
    const gc = new ContainerGarbageCollector({ runtime, logs, nodeState: new FakeNodeState(), clock: new FakeClock(NOW), logger: silentLogger() });
    await gc.garbageCollect(new Map([rec('a')]), true);
    assert.deepEqual(logs.removedLinks.sort(), ['b_default_app-deadid.log', 'junk.log']);
  });
});

describe('deadLogLinksToRemove', () => {
  it('keeps only a running container\'s dead link', () => {
    assert.deepEqual(deadLogLinksToRemove([{ name: 'x-1.log', containerId: '111111' }, { name: 'y-2.log', containerId: '222222' }, { name: 'z.log' }], new Set(['111111'])), ['y-2.log', 'z.log']);
  });
});
