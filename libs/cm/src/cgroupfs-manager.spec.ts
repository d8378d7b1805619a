import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { podUidOfCgroup, qosCgroupName } from './cgroup-manager.js';
import { CgroupfsManager } from './cgroupfs-manager.js';

/** A cgroup v1 mount in a temporary directory: `cpu` and `memory` hierarchies (a `tasks` file each). */
function v1Tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'cm-spec-'));
  for (const h of ['cpu', 'memory']) {
    mkdirSync(join(root, h));
    writeFileSync(join(root, h, 'tasks'), '');
  }
  return root;
}
const cgroup = (root: string, h: string, path: string, procs: number[] = []) => {
  mkdirSync(join(root, h, path), { recursive: true });
  writeFileSync(join(root, h, path, 'cgroup.procs'), procs.map((p) => `${p}\n`).join(''));
};

describe('CgroupfsManager (cgroup v1 layout)', () => {
  it('creates a cgroup in every hierarchy, its missing parents first; a sibling under existing parents, and one that exists, too', async () => {
    const root = v1Tree();
    try {
      const cm = new CgroupfsManager(root);
      const pod = [...qosCgroupName('/', 'Burstable'), 'poda'];
      await cm.create(pod, {});
      assert.equal(await cm.exists(pod), true);
      for (const h of ['cpu', 'memory']) assert.ok(existsSync(join(root, h, 'kubepods', 'burstable', 'poda')), h);
      const sibling = [...qosCgroupName('/', 'Burstable'), 'podb'];
      await cm.create(sibling, {});
      await cm.create(sibling, {});
      assert.deepEqual(await cm.children(qosCgroupName('/', 'Burstable')), ['poda', 'podb']);
      writeFileSync(join(root, 'cpu', 'kubepods', 'burstable', 'podb', 'cpu.shares'), '2');
      await cm.create(sibling, { cpuShares: 102 });
      assert.equal(readFileSync(join(root, 'cpu', 'kubepods', 'burstable', 'podb', 'cpu.shares'), 'utf8'), '102', 'the limits written where the file is');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lists the children of a cgroup in any hierarchy, and none of a missing one', async () => {
    const root = v1Tree();
    try {
      cgroup(root, 'cpu', 'kubepods/besteffort/poda');
      cgroup(root, 'memory', 'kubepods/besteffort/podb');
      const m = new CgroupfsManager(root);
      assert.deepEqual(await m.children(qosCgroupName('/', 'BestEffort')), ['poda', 'podb']);
      assert.deepEqual(await m.children(['nothing', 'here']), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('reads the processes of a cgroup and of the cgroups below it, in every hierarchy, once each', async () => {
    const root = v1Tree();
    try {
      cgroup(root, 'cpu', 'kubepods/podx', [10]);
      cgroup(root, 'cpu', 'kubepods/podx/ctr1', [11, 12]);
      cgroup(root, 'memory', 'kubepods/podx/ctr1', [11, 12, 13]);
      const m = new CgroupfsManager(root);
      assert.deepEqual((await m.pids(['kubepods', 'podx'])).sort((a, b) => a - b), [10, 11, 12, 13]);
      assert.deepEqual(await m.pids(['kubepods', 'gone']), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('podUidOfCgroup', () => {
  const cases = [
    { child: 'pod1234-abcd', want: '1234-abcd' },
    { child: 'burstable', want: undefined },
    { child: 'podburstable', want: undefined },
    { child: 'pod', want: undefined },
    { child: 'something', want: undefined },
  ];
  for (const tc of cases) it(`${tc.child}: ${String(tc.want)}`, () => assert.equal(podUidOfCgroup(tc.child), tc.want));
});
