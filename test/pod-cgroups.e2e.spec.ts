/**
 * Pod cgroups and QoS on the real containerd and the host's real cgroups
 * (issue 14): a Guaranteed, a Burstable and a BestEffort pod each run in
 * `<CGROUP_ROOT>/kubepods/[<qos>/]pod<uid>` (the stack's own root), as /proc/<pid>/cgroup of its container's
 * process says, limited as ResourceConfigForPod says (the kernel's own
 * files), with the QoS class in the status GET /pods serves; the Burstable
 * parent's CPU shares are its pods' requests (UpdateQOSCgroups); the pod
 * cgroups are gone once the pods are deleted.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const MOUNT = '/sys/fs/cgroup';
const V2 = existsSync(join(MOUNT, 'cgroup.controllers'));
const MI = 1024 * 1024;

function pod(name: string, resources: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n${resources}`;
}

/** The cgroup a process is in, for one controller (v1) or the unified one (v2). */
function cgroupOf(pid: number, controller: string): string {
  for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n')) {
    const [, controllers, path] = line.split(':');
    if (V2 ? controllers === '' : (controllers ?? '').split(',').includes(controller)) return path ?? '';
  }
  throw new Error(`process ${pid} has no ${controller} cgroup`);
}

/** A cgroup file's value: v1 under the controller's hierarchy, v2 under the one tree. */
const read = (controller: string, cgroup: string, file: string) => readFileSync(join(MOUNT, V2 ? '' : controller, cgroup, file), 'utf8').trim();

describe('pod cgroups and QoS on the real containerd and cgroups', { timeout: 300_000 }, () => {
  const stack = new NodeStack({ node: 'cgroups-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'] });

  before(() => stack.start());
  after(() => stack.stop());

  it('Guaranteed, Burstable and BestEffort pods run in their QoS cgroups with their limits, and the cgroups go with the pods', async (t) => {
    const cases = [
      {
        name: 'guaranteed',
        resources: '      resources:\n        limits: { cpu: 250m, memory: 64Mi }\n',
        qos: 'Guaranteed',
        parent: `${stack.cgroupRoot}/kubepods`,
        want: { shares: 256, quota: 25_000, memory: 64 * MI },
      },
      {
        name: 'burstable',
        resources: '      resources:\n        requests: { cpu: 100m, memory: 32Mi }\n        limits: { cpu: 500m, memory: 96Mi }\n',
        qos: 'Burstable',
        parent: `${stack.cgroupRoot}/kubepods/burstable`,
        want: { shares: 102, quota: 50_000, memory: 96 * MI },
      },
      { name: 'besteffort', resources: '', qos: 'BestEffort', parent: `${stack.cgroupRoot}/kubepods/besteffort`, want: { shares: 2, quota: undefined, memory: undefined } },
    ];
    for (const c of cases) stack.writeManifest(c.name, pod(c.name, c.resources));

    const podCgroups: string[] = [];
    for (const c of cases) {
      const status = await stack.waitForPod(c.name, 'main running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
      assert.equal(status.qosClass, c.qos, `${c.name}: status.qosClass`);
      const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName(c.name))?.metadata?.uid ?? '';
      const podCgroup = `${c.parent}/pod${uid}`;
      podCgroups.push(podCgroup);

      const id = (await stack.containers(c.name)).find((x) => x.state === 'CONTAINER_RUNNING')?.id ?? '';
      const info = JSON.parse((await stack.cri.runtime('ContainerStatus', { containerId: id, verbose: true })).info['info'] ?? '{}') as { pid?: number };
      assert.ok(info.pid, `${c.name}: the container's pid`);
      for (const controller of ['memory', 'cpu']) {
        const cg = cgroupOf(info.pid, controller);
        assert.equal(cg, `${podCgroup}/${id}`, `${c.name}: the container's ${controller} cgroup is below the pod's`);
      }

      const got = V2
        ? {
            weight: Number(read('cpu', podCgroup, 'cpu.weight')),
            quota: read('cpu', podCgroup, 'cpu.max').split(' ')[0],
            memory: read('memory', podCgroup, 'memory.max'),
          }
        : {
            shares: Number(read('cpu', podCgroup, 'cpu.shares')),
            quota: Number(read('cpu', podCgroup, 'cpu.cfs_quota_us')),
            memory: Number(read('memory', podCgroup, 'memory.limit_in_bytes')),
          };
      t.diagnostic(`${c.name}: ${podCgroup} ${JSON.stringify(got)}`);
      if (V2) {
        assert.equal(got.quota, c.want.quota === undefined ? 'max' : String(c.want.quota), `${c.name}: cpu.max`);
        assert.equal(got.memory, c.want.memory === undefined ? 'max' : String(c.want.memory), `${c.name}: memory.max`);
      } else {
        assert.equal(got.shares, c.want.shares, `${c.name}: cpu.shares`);
        assert.equal(got.quota, c.want.quota ?? -1, `${c.name}: cpu.cfs_quota_us`);
        // Unlimited is the page-rounded largest value the kernel holds: more than any limit set here.
        if (c.want.memory === undefined) assert.ok(Number(got.memory) > 2 ** 60, `${c.name}: no memory limit`);
        else assert.equal(got.memory, c.want.memory, `${c.name}: memory.limit_in_bytes`);
      }
    }
    // BestEffort pods share the minimum CPU weight, as their parent has it.
    if (!V2) assert.equal(Number(read('cpu', `${stack.cgroupRoot}/kubepods/besteffort`, 'cpu.shares')), 2);
    // UpdateQOSCgroups: the Burstable parent's shares are its pods' CPU requests (one pod, 100m).
    if (V2) assert.equal(Number(read('cpu', `${stack.cgroupRoot}/kubepods/burstable`, 'cpu.weight')), 1 + Math.floor(((102 - 2) * 9999) / 262_142));
    else assert.equal(Number(read('cpu', `${stack.cgroupRoot}/kubepods/burstable`, 'cpu.shares')), 102);

    for (const c of cases) stack.removeManifest(c.name);
    const started = Date.now();
    const hierarchies = V2 ? [''] : ['cpu', 'memory', 'pids', 'cpuset'];
    await stack.waitFor('every pod cgroup to be gone', () => (podCgroups.every((cg) => hierarchies.every((h) => !existsSync(join(MOUNT, h, cg)))) ? true : undefined), 60_000);
    t.diagnostic(`pod cgroups gone ${Date.now() - started}ms after the manifests were removed`);
  });
});
