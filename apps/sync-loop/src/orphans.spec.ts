import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCgroupManager } from '@app/cm/testing';
import { FakeClock } from '@app/clock/testing';
import type { PodRecord, PodSyncStatusRecord } from '@app/contracts';
import { silentLogger } from '@app/observability';
import { OrphanedPodCleaner, decideOrphans, isEmptyDirMount, type OrphanInput } from './orphans.js';
import type { RuntimePod } from './ports.js';
import { RuntimeCache } from './runtime-cache.js';
import { FakeHostProcesses, FakeNodeState, FakePodDirectories, FakeRuntimeView } from './testing.js';

const rec = (uid: string): [string, PodRecord] => [uid, { pod: { metadata: { uid, name: uid, namespace: 'default' }, spec: { containers: [] } }, source: 'file', addedAt: 100, admitted: true }];
const rp = (uid: string, running = false): RuntimePod => ({ uid, name: uid, namespace: 'default', running });

describe('decideOrphans', () => {
  const cases: {
    name: string;
    input: Partial<OrphanInput>;
    want: { dirs: string[]; cgroups: string[] };
  }[] = [
    { name: 'a desired pod keeps its directory and cgroup', input: { desired: new Map([rec('a')]), podDirectories: ['a'], podCgroups: new Map([['a', ['kubepods', 'poda']]]) }, want: { dirs: [], cgroups: [] } },
    { name: 'a pod no one knows loses both', input: { podDirectories: ['x'], podCgroups: new Map([['x', ['kubepods', 'besteffort', 'podx']]]) }, want: { dirs: ['x'], cgroups: ['x'] } },
    { name: 'nothing is judged before every source has delivered', input: { allSourcesReady: false, podDirectories: ['x'], podCgroups: new Map([['x', ['kubepods', 'podx']]]) }, want: { dirs: [], cgroups: [] } },
    {
      name: 'a pod worker that has not finished owns the pod, terminating or not',
      input: {
        workers: new Map<string, PodSyncStatusRecord>([['s', { syncedAt: 1 }], ['t', { terminatingAt: 2 }], ['d', { terminatedAt: 3 }]]),
        podDirectories: ['s', 't', 'd'],
        podCgroups: new Map([['s', ['kubepods', 'pods']], ['t', ['kubepods', 'podt']], ['d', ['kubepods', 'podd']]]),
      },
      want: { dirs: [], cgroups: [] },
    },
    {
      name: 'a finished worker of a pod no longer desired leaves it to housekeeping',
      input: { workers: new Map<string, PodSyncStatusRecord>([['f', { terminatedAt: 3, finished: true }]]), podDirectories: ['f'], podCgroups: new Map([['f', ['kubepods', 'podf']]]) },
      want: { dirs: ['f'], cgroups: ['f'] },
    },
    {
      name: "a runtime pod of this node keeps both, running or not (the container GC removes it first)",
      input: { runtimePods: [rp('r', true), rp('e')], podDirectories: ['r', 'e'], podCgroups: new Map([['r', ['kubepods', 'podr']], ['e', ['kubepods', 'pode']]]) },
      want: { dirs: [], cgroups: [] },
    },
    {
      name: "another stack's sandbox on the runtime keeps its cgroup (the tree is the host's), not a directory of ours",
      input: { runtimeUids: new Set(['o']), podDirectories: ['o'], podCgroups: new Map([['o', ['kubepods', 'podo']]]) },
      want: { dirs: ['o'], cgroups: [] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const d = decideOrphans({ allSourcesReady: true, desired: new Map(), workers: new Map(), runtimePods: [], runtimeUids: new Set(), podDirectories: [], podCgroups: new Map(), ...tc.input });
      assert.deepEqual(d.orphanedDirectories, tc.want.dirs);
      assert.deepEqual(d.orphanedCgroups.map(([uid]) => uid), tc.want.cgroups);
    });
  }
});

describe('isEmptyDirMount', () => {
  const cases = [
    { path: '/pods/x/volumes/kubernetes.io~empty-dir/cache', want: true },
    { path: '/pods/x/volumes/kubernetes.io~secret/token', want: true },
    { path: '/pods/x/volumes/kubernetes.io~projected/all', want: true },
    { path: '/pods/x/volumes/kubernetes.io~configmap/cfg', want: false },
    { path: '/pods/x/volumes/kubernetes.io~csi/data', want: false },
    { path: '/pods/x/volumes/kubernetes.io~empty-dir/cache/nested', want: false },
    { path: '/pods/x', want: false },
    { path: '/pods/xy/volumes/kubernetes.io~empty-dir/cache', want: false },
  ];
  for (const tc of cases) it(`${tc.path}: ${tc.want}`, () => assert.equal(isEmptyDirMount('/pods/x', tc.path), tc.want));
});

describe('OrphanedPodCleaner', () => {
  function setup(grace = 10_000) {
    const clock = new FakeClock();
    const runtime = new FakeRuntimeView();
    const state = new FakeNodeState();
    const dirs = new FakePodDirectories();
    const cgroups = new FakeCgroupManager();
    const processes = new FakeHostProcesses();
    const cleaner = new OrphanedPodCleaner({ runtime: new RuntimeCache(runtime, clock, 0), nodeState: state, dirs, cgroups, processes, clock, logger: silentLogger() }, { graceMs: grace, cgroupRoot: '/' });
    return { clock, runtime, state, dirs, cgroups, processes, cleaner };
  }

  it('removes what an unknown pod left once it has been unknown for the grace period, and keeps a desired pod\'s', async () => {
    const { clock, dirs, cgroups, processes, cleaner } = setup();
    dirs.dirs.set('gone', []);
    dirs.dirs.set('live', []);
    cgroups.add('/kubepods/burstable/podgone', [101, 102]);
    cgroups.add('/kubepods/podlive', [201]);
    cgroups.add('/kubepods/besteffort');
    const desired = new Map([rec('live')]);
    let r = await cleaner.cleanup(desired, true);
    assert.deepEqual(r.removedDirectories, [], 'nothing within the grace period');
    await clock.step(10_000);
    r = await cleaner.cleanup(desired, true);
    assert.deepEqual(r.removedDirectories, ['gone']);
    assert.deepEqual(r.destroyedCgroups, ['gone']);
    assert.deepEqual(processes.killed, [101, 102], 'its processes killed before the cgroup goes');
    assert.deepEqual(cgroups.destroyed, ['/kubepods/burstable/podgone']);
    assert.deepEqual([...dirs.dirs.keys()], ['live']);
    assert.ok(cgroups.cgroups.has('/kubepods/podlive') && cgroups.cgroups.has('/kubepods/besteffort'), 'the live pod and the QoS parents stay');
  });

  it('reads the workers mirror; what is due is judged again on its record read by a get, and a worker that has it keeps it', async () => {
    const { clock, dirs, cgroups, state, cleaner } = setup();
    dirs.dirs.set('p', []);
    cgroups.add('/kubepods/podp', [301]);
    // The mirror has not brought the record a pod worker wrote for p.
    state.lagging = { workers: new Map() };
    await cleaner.cleanup(new Map(), true);
    assert.deepEqual(state.currentReads, [], 'nothing due: no get');
    await clock.step(10_000);
    state.workers.set('p', { syncedAt: clock.now(), terminatingAt: clock.now() });
    const r = await cleaner.cleanup(new Map(), true);
    assert.deepEqual(state.currentReads, [['p']]);
    assert.deepEqual([r.removedDirectories, r.destroyedCgroups], [[], []]);
    assert.ok(dirs.dirs.has('p') && cgroups.cgroups.has('/kubepods/podp'));
    // Its record finished and gone: unknown again, with a grace period of its own.
    state.workers.delete('p');
    await clock.step(2000);
    assert.deepEqual((await cleaner.cleanup(new Map(), true)).removedDirectories, [], 'its grace starts anew');
    await clock.step(10_000);
    assert.deepEqual((await cleaner.cleanup(new Map(), true)).removedDirectories, ['p']);
  });

  it('a pod known again within the grace period starts its grace anew', async () => {
    const { clock, dirs, cleaner } = setup();
    dirs.dirs.set('p', []);
    await cleaner.cleanup(new Map(), true);
    await clock.step(6000);
    await cleaner.cleanup(new Map([rec('p')]), true);
    await clock.step(6000);
    assert.deepEqual((await cleaner.cleanup(new Map(), true)).removedDirectories, [], 'unknown again for 0s only');
    await clock.step(10_000);
    assert.deepEqual((await cleaner.cleanup(new Map(), true)).removedDirectories, ['p']);
  });

  it('unmounts a leftover emptyDir tmpfs, then removes the directory', async () => {
    const { dirs, cleaner } = setup(0);
    dirs.dirs.set('m', ['/pods/m/volumes/kubernetes.io~empty-dir/cache']);
    const r = await cleaner.cleanup(new Map(), true);
    assert.deepEqual(dirs.unmounted, ['/pods/m/volumes/kubernetes.io~empty-dir/cache']);
    assert.deepEqual(r.removedDirectories, ['m']);
  });

  it('refuses a directory with another mount below it, and keeps its cgroup (as upstream: volumes still exist)', async () => {
    const { dirs, cgroups, processes, cleaner } = setup(0);
    dirs.dirs.set('v', ['/pods/v/volumes/kubernetes.io~nfs/data']);
    cgroups.add('/kubepods/podv', [7]);
    const r = await cleaner.cleanup(new Map(), true);
    assert.deepEqual(r.refused, ['v']);
    assert.deepEqual(r.failedDirectories, ['v']);
    assert.deepEqual(dirs.removed, []);
    assert.deepEqual(dirs.unmounted, [], 'only emptyDir leftovers are unmounted');
    assert.deepEqual(processes.killed, []);
    assert.ok(cgroups.cgroups.has('/kubepods/podv'));
  });

  it('keeps a cgroup whose processes cannot all be killed, and tries again at the next pass', async () => {
    const { cgroups, processes, cleaner } = setup(0);
    cgroups.add('/kubepods/besteffort/podk', [1, 2]);
    processes.survivors.add(2);
    assert.deepEqual((await cleaner.cleanup(new Map(), true)).destroyedCgroups, []);
    assert.ok(cgroups.cgroups.has('/kubepods/besteffort/podk'));
    processes.survivors.clear();
    assert.deepEqual((await cleaner.cleanup(new Map(), true)).destroyedCgroups, ['k']);
  });

  it('never touches a pod whose worker has not finished, nor one another stack runs', async () => {
    const { state, runtime, dirs, cgroups, cleaner } = setup(0);
    state.workers.set('w', { terminatingAt: 1 });
    runtime.otherStacksUids.add('o');
    dirs.dirs.set('w', []);
    cgroups.add('/kubepods/podw', [1]);
    cgroups.add('/kubepods/podo', [2]);
    const r = await cleaner.cleanup(new Map(), true);
    assert.deepEqual(r, { removedDirectories: [], destroyedCgroups: [], refused: [], failedDirectories: [] });
  });

  it('reads no cgroup without CGROUPS_PER_QOS', async () => {
    const { runtime, state, dirs, processes } = setup(0);
    const cgroups = new FakeCgroupManager();
    cgroups.add('/kubepods/podx', [1]);
    const cleaner = new OrphanedPodCleaner({ runtime: new RuntimeCache(runtime, new FakeClock(), 0), nodeState: state, dirs, processes, clock: new FakeClock(), logger: silentLogger() }, { graceMs: 0 });
    assert.deepEqual((await cleaner.cleanup(new Map(), true)).destroyedCgroups, []);
    assert.ok(cgroups.cgroups.has('/kubepods/podx'));
  });
});
