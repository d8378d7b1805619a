import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, PodSpec } from '@app/contracts';
import type { CriInput, LinuxContainerSecurityContext } from '@app/cri';
import { containerSecurityContext, verifyRunAsNonRoot, type ImageUser } from './security-context.js';

const MASKED = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
const READONLY = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];
const node = { seccompProfileRoot: '/var/lib/kubelet/seccomp' };

const pod = (spec: Partial<PodSpec> = {}, c: Partial<Container> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { containers: [{ name: 'c', image: 'busybox', ...c }], ...spec },
});
const first = (p: Pod): Container => p.spec.containers[0] as Container;

/** What every unprivileged container gets when nothing is set: root (from the image), Unconfined, moby's masks. */
const base: CriInput<LinuxContainerSecurityContext> = {
  privileged: false,
  readonlyRootfs: false,
  runAsUser: { value: '0' },
  supplementalGroups: [],
  seccomp: { profileType: 'Unconfined' },
  noNewPrivs: false,
  maskedPaths: MASKED,
  readonlyPaths: READONLY,
};

describe('containerSecurityContext (determineEffectiveSecurityContext)', () => {
  const cases: { name: string; pod: Pod; image?: ImageUser; want: CriInput<LinuxContainerSecurityContext> }[] = [
    { name: 'nothing set: the image has no user, so root', pod: pod(), want: base },
    { name: 'the image\'s numeric user', pod: pod(), image: { uid: 1234 }, want: { ...base, runAsUser: { value: '1234' } } },
    { name: 'the image\'s user by name: for the runtime to resolve', pod: pod(), image: { username: 'nobody' }, want: (({ runAsUser: _, ...rest }) => ({ ...rest, runAsUsername: 'nobody' }))(base) },
    {
      name: 'the pod\'s runAsUser and runAsGroup, over the image',
      pod: pod({ securityContext: { runAsUser: 1000, runAsGroup: 3000 } }),
      image: { uid: 1234 },
      want: { ...base, runAsUser: { value: '1000' }, runAsGroup: { value: '3000' } },
    },
    {
      name: 'the container\'s over the pod\'s',
      pod: pod({ securityContext: { runAsUser: 1000, runAsGroup: 3000 } }, { securityContext: { runAsUser: 65534 } }),
      want: { ...base, runAsUser: { value: '65534' }, runAsGroup: { value: '3000' } },
    },
    {
      name: 'fsGroup, then supplementalGroups, with their policy',
      pod: pod({ securityContext: { fsGroup: 2000, supplementalGroups: [4000, 5000], supplementalGroupsPolicy: 'Strict' } as PodSpec['securityContext'] }),
      want: { ...base, supplementalGroups: ['2000', '4000', '5000'], supplementalGroupsPolicy: 'Strict' },
    },
    { name: 'allowPrivilegeEscalation false: no_new_privs', pod: pod({}, { securityContext: { allowPrivilegeEscalation: false } }), want: { ...base, noNewPrivs: true } },
    { name: 'allowPrivilegeEscalation true: none', pod: pod({}, { securityContext: { allowPrivilegeEscalation: true } }), want: base },
    {
      name: 'capabilities added and dropped',
      pod: pod({}, { securityContext: { capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] } } }),
      want: { ...base, capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] } },
    },
    { name: 'privileged and a read-only root', pod: pod({}, { securityContext: { privileged: true, readOnlyRootFilesystem: true } }), want: { ...base, privileged: true, readonlyRootfs: true } },
    { name: 'an Unmasked /proc: no masked or read-only paths', pod: pod({}, { securityContext: { procMount: 'Unmasked' } }), want: { ...base, maskedPaths: [], readonlyPaths: [] } },
    { name: 'the pod\'s seccomp profile', pod: pod({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }), want: { ...base, seccomp: { profileType: 'RuntimeDefault' } } },
    {
      name: 'the container\'s Localhost profile over the pod\'s, under the profile root',
      pod: pod({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } }, { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'audit.json' } } }),
      want: { ...base, seccomp: { profileType: 'Localhost', localhostRef: '/var/lib/kubelet/seccomp/audit.json' } },
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(containerSecurityContext(tc.pod, first(tc.pod), tc.image ?? {}, node), tc.want));

  it('SeccompDefault: RuntimeDefault when nothing names a profile', () => {
    assert.deepEqual(containerSecurityContext(pod(), first(pod()), {}, { ...node, seccompDefault: true }).seccomp, { profileType: 'RuntimeDefault' });
  });
  it('the host\'s thermal_throttle directories are masked too', () => {
    const got = containerSecurityContext(pod(), first(pod()), {}, { ...node, hostMaskedPaths: ['/sys/devices/system/cpu/cpu0/thermal_throttle'] });
    assert.deepEqual(got.maskedPaths, [...MASKED, '/sys/devices/system/cpu/cpu0/thermal_throttle']);
  });
  it('a Localhost profile without its path is refused', () => {
    const p = pod({}, { securityContext: { seccompProfile: { type: 'Localhost' } } });
    assert.throws(() => containerSecurityContext(p, first(p), {}, node), /localhostProfile must be set if seccompProfile type is Localhost/);
  });
});

describe('verifyRunAsNonRoot (security_context_others.go)', () => {
  const nonRoot = (runAsUser?: number, podLevel = false) =>
    podLevel ? pod({ securityContext: { runAsNonRoot: true } }, runAsUser !== undefined ? { securityContext: { runAsUser } } : {}) : pod({}, { securityContext: { runAsNonRoot: true, ...(runAsUser !== undefined ? { runAsUser } : {}) } });
  const cases: { name: string; pod: Pod; image: ImageUser; error?: string }[] = [
    { name: 'not asked for: anything goes', pod: pod(), image: {} },
    { name: 'an explicit non-root user', pod: nonRoot(1000), image: {} },
    { name: 'an explicit root user', pod: nonRoot(0), image: { uid: 1234 }, error: 'container\'s runAsUser breaks non-root policy (pod: "p_ns(u1)", container: c)' },
    { name: 'the image\'s non-root uid', pod: nonRoot(), image: { uid: 1234 } },
    { name: 'an image with no user runs as root', pod: nonRoot(), image: {}, error: 'container has runAsNonRoot and image will run as root (pod: "p_ns(u1)", container: c)' },
    { name: 'asked at the pod level', pod: nonRoot(undefined, true), image: { uid: 0 }, error: 'container has runAsNonRoot and image will run as root (pod: "p_ns(u1)", container: c)' },
    {
      name: 'an image user by name cannot be checked',
      pod: nonRoot(),
      image: { username: 'app' },
      error: 'container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root (pod: "p_ns(u1)", container: c)',
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const run = () => verifyRunAsNonRoot(tc.pod, first(tc.pod), tc.image);
      if (tc.error) assert.throws(run, { message: tc.error });
      else assert.doesNotThrow(run);
    });
  }
});
