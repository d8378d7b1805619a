import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineAppArmor, machineHugePages } from './node.js';

describe('machineHugePages (cadvisor MachineInfo\'s huge pages)', () => {
  it('names each size as upstream\'s resource (hugepages-2Mi, hugepages-1Gi) with its bytes pre-allocated', () => {
    const root = mkdtempSync(join(tmpdir(), 'hugepages-'));
    try {
      for (const [dir, n] of [['hugepages-2048kB', '3'], ['hugepages-1048576kB', '0'], ['hugepages-64kB', '2']] as const) {
        mkdirSync(join(root, dir));
        writeFileSync(join(root, dir, 'nr_hugepages'), `${n}\n`);
      }
      mkdirSync(join(root, 'not-a-size'));
      assert.deepEqual(machineHugePages(root), { 'hugepages-2Mi': 3 * 2 * 2 ** 20, 'hugepages-1Gi': 0, 'hugepages-64Ki': 2 * 64 * 1024 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a kernel without huge pages: none', () => {
    assert.deepEqual(machineHugePages('/nonexistent/hugepages'), {});
  });
});

describe('machineAppArmor (libcontainer apparmor.IsEnabled)', () => {
  const cases: { name: string; securityfs: boolean; enabled?: string; want: { hostError?: string } }[] = [
    { name: 'securityfs and the module enabled: AppArmor enforced', securityfs: true, enabled: 'Y\n', want: {} },
    { name: 'the module disabled', securityfs: true, enabled: 'N\n', want: { hostError: 'AppArmor is not enabled on the host' } },
    { name: 'no securityfs entry', securityfs: false, enabled: 'Y\n', want: { hostError: 'AppArmor is not enabled on the host' } },
    { name: 'no module parameter', securityfs: true, want: { hostError: 'AppArmor is not enabled on the host' } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const root = mkdtempSync(join(tmpdir(), 'apparmor-'));
      try {
        if (tc.securityfs) mkdirSync(join(root, 'apparmor'));
        if (tc.enabled !== undefined) writeFileSync(join(root, 'enabled'), tc.enabled);
        assert.deepEqual(machineAppArmor(join(root, 'apparmor'), join(root, 'enabled')), tc.want);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});
