import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '@app/contracts';
import { canAdmitPod, nodeInfoFrom } from './admission.js';
import { SysctlAllowlist, normalizeSysctlName, safeSysctlAllowlist } from './sysctl.js';

const pod = (sysctls: { name: string; value: string }[], o: { hostNetwork?: boolean; hostIPC?: boolean } = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u1' },
  spec: { containers: [{ name: 'c', image: 'busybox' }], securityContext: { sysctls }, ...o },
});

describe('normalizeSysctlName (component-helpers NormalizeName)', () => {
  const cases: [string, string][] = [
    ['kernel.shm_rmid_forced', 'kernel.shm_rmid_forced'],
    ['kernel/shm_rmid_forced', 'kernel.shm_rmid_forced'],
    ['net/ipv4/conf/eno2.100/rp_filter', 'net.ipv4.conf.eno2/100.rp_filter'],
    ['net.ipv4.conf.eno2/100.rp_filter', 'net.ipv4.conf.eno2/100.rp_filter'],
    ['', ''],
  ];
  for (const [name, want] of cases) it(`${name || '(empty)'} -> ${want}`, () => assert.equal(normalizeSysctlName(name), want));
});

describe('safeSysctlAllowlist: the safe sysctls the kernel namespaces', () => {
  it('a recent kernel has all twelve', () => assert.equal(safeSysctlAllowlist('6.8.0-45-generic').length, 12));
  it('4.4 lacks those namespaced from 4.5 on', () => {
    const list = safeSysctlAllowlist('4.4.0');
    assert.ok(list.includes('net.ipv4.ip_local_reserved_ports'));
    assert.ok(!list.includes('net.ipv4.tcp_keepalive_time'));
    assert.ok(!list.includes('net.ipv4.tcp_rmem'));
  });
});

describe('SysctlAllowlist.admit (sysctl/allowlist.go)', () => {
  const allow = new SysctlAllowlist([...safeSysctlAllowlist(), 'kernel.msg*', 'net.core.somaxconn']);
  const cases: { name: string; pod: Pod; want: ReturnType<SysctlAllowlist['admit']> }[] = [
    { name: 'no sysctls', pod: pod([]), want: { admit: true } },
    { name: 'a safe one', pod: pod([{ name: 'kernel.shm_rmid_forced', value: '1' }]), want: { admit: true } },
    { name: 'a safe one with slashes', pod: pod([{ name: 'kernel/shm_rmid_forced', value: '1' }]), want: { admit: true } },
    { name: 'an allowed unsafe one by its prefix', pod: pod([{ name: 'kernel.msgmax', value: '10000' }]), want: { admit: true } },
    { name: 'an allowed unsafe one by name', pod: pod([{ name: 'net.core.somaxconn', value: '1024' }]), want: { admit: true } },
    {
      name: 'an unsafe one not allowed',
      pod: pod([{ name: 'kernel.shm_rmid_forced', value: '1' }, { name: 'kernel.shmmax', value: '1' }]),
      want: { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.shmmax" not allowlisted' },
    },
    {
      name: 'a network one in a pod on the host\'s network',
      pod: pod([{ name: 'net.ipv4.tcp_syncookies', value: '1' }], { hostNetwork: true }),
      want: { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled' },
    },
    {
      name: 'an IPC one in a pod on the host\'s IPC',
      pod: pod([{ name: 'kernel.shm_rmid_forced', value: '1' }], { hostIPC: true }),
      want: { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled' },
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(allow.admit(tc.pod), tc.want));

  it('refuses a pattern that is not namespaced', () => {
    assert.throws(() => new SysctlAllowlist(['vm.swappiness']), /the sysctls "vm.swappiness" are not known to be namespaced/);
  });
});

describe('canAdmitPod: the sysctl allowlist before the predicates', () => {
  it('an unsafe sysctl not enabled on the node: SysctlForbidden', () => {
    const node = nodeInfoFrom({ name: 'n1', cpu: '2', memory: '4Gi', maxPods: 110 });
    assert.deepEqual(canAdmitPod([], pod([{ name: 'kernel.msgmax', value: '10000000000' }]), node), {
      admit: false,
      reason: 'SysctlForbidden',
      message: 'forbidden sysctl: "kernel.msgmax" not allowlisted',
    });
  });
  it('the same sysctl allowed with --allowed-unsafe-sysctls', () => {
    const node = nodeInfoFrom({ name: 'n1', cpu: '2', memory: '4Gi', maxPods: 110, allowedUnsafeSysctls: ['kernel.msgmax'] });
    assert.deepEqual(canAdmitPod([], pod([{ name: 'kernel.msgmax', value: '10000000000' }]), node), { admit: true });
  });
});
