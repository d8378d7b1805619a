/**
 * Housekeeping's cleanupOrphanedPodDirs and cleanupOrphanedPodCgroups on the
 * real host (issue 14, ADR 0014): a pod directory under POD_ROOT_DIR and a
 * pod cgroup under kubepods that no known pod owns (left by a pod whose
 * stack died, made here by hand with made-up UIDs) are removed by the sync
 * loop, the cgroup's process killed first and the leftover tmpfs of its
 * volumes (a memory emptyDir, a secret) unmounted first; a directory with any other mount below it is kept, as
 * upstream refuses it; a running pod's directory, memory-backed emptyDir
 * and cgroup stay.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { CgroupfsManager } from '@app/cm';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const MOUNT = '/sys/fs/cgroup';
const V2 = existsSync(join(MOUNT, 'cgroup.controllers'));
/** The hierarchies a pod cgroup is made in (v1: every one with a `tasks` file; v2: the one tree). */
const hierarchies = V2 ? [''] : readdirSync(MOUNT).filter((h) => existsSync(join(MOUNT, h, 'tasks')));
const cgroupExists = (cg: string) => hierarchies.some((h) => existsSync(join(MOUNT, h, cg)));
const isMounted = (path: string) => readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((l) => l.split(' ')[4] === path);

const keeper = `apiVersion: v1
kind: Pod
metadata:
  name: keeper
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${IMAGE}
      command: ["sh", "-c", "echo kept > /cache/file; sleep 3600"]
      volumeMounts:
        - { name: cache, mountPath: /cache }
        - { name: mem, mountPath: /mem }
  volumes:
    - name: cache
      emptyDir: {}
    - name: mem
      emptyDir: { medium: Memory, sizeLimit: 8Mi }
`;

describe('orphaned pod directories and cgroups on the real host', { timeout: 300_000 }, () => {
  const stack = new NodeStack({
    node: 'orphans-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    env: { 'sync-loop': { ORPHAN_GRACE_PERIOD: '2s' } },
  });
  const podRoot = () => join(stack.dir, 'pods');
  const mounts: string[] = [];
  const cgroups = new CgroupfsManager(MOUNT);

  before(() => stack.start());
  after(async () => {
    for (const m of mounts) if (isMounted(m)) execFileSync('umount', [m]);
    await stack.stop();
  });

  it('removes what unknown pods left behind, refuses a directory with a foreign mount, and keeps a running pod\'s', async (t) => {
    stack.writeManifest('keeper', keeper);
    await stack.waitForPod('keeper', 'running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('keeper'))?.metadata?.uid ?? '';
    const keeperDir = join(podRoot(), uid);
    const keeperMem = join(keeperDir, 'volumes', 'kubernetes.io~empty-dir', 'mem');
    const keeperCgroup = `${stack.cgroupRoot}/kubepods/besteffort/pod${uid}`;
    assert.ok(existsSync(keeperDir) && isMounted(keeperMem) && cgroupExists(keeperCgroup), 'the running pod has its directory, its tmpfs and its cgroup');

    // Left behind by pods no one knows: a directory with an emptyDir's data, one with the leftover tmpfs
    // of a memory emptyDir and a secret, one with a mount that is no volume of ours (kept), and a cgroup
    // with a process in it.
    const [plain, withTmpfs, foreign, cgroupOnly] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const data = join(podRoot(), plain, 'volumes', 'kubernetes.io~empty-dir', 'data');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'file'), 'left behind');
    mkdirSync(join(podRoot(), plain, 'containers', 'app'), { recursive: true });
    const tmpfs = join(podRoot(), withTmpfs, 'volumes', 'kubernetes.io~empty-dir', 'mem');
    const secret = join(podRoot(), withTmpfs, 'volumes', 'kubernetes.io~secret', 'token');
    const other = join(podRoot(), foreign, 'volumes', 'kubernetes.io~nfs', 'share');
    for (const m of [tmpfs, secret, other]) {
      mkdirSync(m, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', m]);
      mounts.push(m);
      writeFileSync(join(m, 'file'), 'in memory');
    }
    const orphanCgroup = [stack.cgroupRoot.slice(1), 'kubepods', 'besteffort', `pod${cgroupOnly}`];
    await cgroups.create(orphanCgroup, {});
    const sleeper = spawn('sleep', ['600'], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => sleeper.once('exit', (_code, signal) => resolve(signal)));
    for (const h of hierarchies) writeFileSync(join(MOUNT, h, ...orphanCgroup, 'cgroup.procs'), String(sleeper.pid));
    const started = Date.now();

    await stack.waitFor('the orphaned directories and cgroup to be gone', () => (!existsSync(join(podRoot(), plain)) && !existsSync(join(podRoot(), withTmpfs)) && !cgroupExists(`/${orphanCgroup.join('/')}`) ? true : undefined), 60_000);
    t.diagnostic(`orphans removed ${Date.now() - started}ms after they were made (grace period 2s, housekeeping every 2s)`);
    assert.equal(await exited, 'SIGKILL', "the orphaned cgroup's process was killed");
    assert.ok(!isMounted(tmpfs) && !isMounted(secret), 'the leftover emptyDir and secret tmpfs were unmounted');

    // Another pass or two: the foreign mount is still there, with its directory; the running pod keeps everything.
    await new Promise((r) => setTimeout(r, 5000));
    assert.ok(isMounted(other) && readFileSync(join(other, 'file'), 'utf8') === 'in memory', 'a directory with a mount that is no volume of ours is kept, its mount untouched');
    assert.ok(existsSync(keeperDir) && isMounted(keeperMem) && cgroupExists(keeperCgroup), "the running pod's directory, tmpfs and cgroup stay");
    assert.equal(readFileSync(join(keeperDir, 'volumes', 'kubernetes.io~empty-dir', 'cache', 'file'), 'utf8'), 'kept\n');
    // The sweep's gauges (upstream's): the refused directory is an orphan whose volumes could not be cleaned. They are
    // the last sweep's: the one that removed the others counted those too, so wait for a sweep after it (the sleep
    // above is no promise of one on a loaded machine) rather than read them once.
    const cleanedOne = /^kubelet_orphan_pod_cleaned_volumes(\{[^}]*\})? 1$/m;
    const erredOne = /^kubelet_orphan_pod_cleaned_volumes_errors(\{[^}]*\})? 1$/m;
    const metrics = await stack.waitFor('a sweep with the refused directory alone', async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.procs.get('sync-loop#0')?.port ?? 0}/metrics`)).text();
      return cleanedOne.test(text) && erredOne.test(text) ? text : undefined;
    }, 30_000);
    assert.match(metrics, cleanedOne);
    assert.match(metrics, erredOne);
    const s = await stack.waitForPod('keeper', 'still running', (x) => x.containerStatuses?.[0]?.state?.running !== undefined);
    assert.equal(s.containerStatuses?.[0]?.restartCount ?? 0, 0);

    // Once the foreign mount goes, so does its directory.
    execFileSync('umount', [other]);
    await stack.waitFor('the formerly refused directory to be gone', () => (!existsSync(join(podRoot(), foreign)) ? true : undefined), 30_000);

    // And a pod removed the ordinary way leaves nothing for housekeeping: its worker removes both.
    stack.removeManifest('keeper');
    await stack.waitFor("the keeper's directory and cgroup to be gone", () => (!existsSync(keeperDir) && !cgroupExists(keeperCgroup) ? true : undefined), 60_000);
  });
});
