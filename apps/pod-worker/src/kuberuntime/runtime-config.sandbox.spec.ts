import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodSpec } from '@app/contracts';
import { generatePodSandboxConfig } from './runtime-config.js';

const node = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', hostDns: { servers: [], searches: [], options: [] } };
const pod = (spec: Partial<PodSpec> = {}, name = 'web'): Pod => ({ metadata: { name, namespace: 'default', uid: 'u1' }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
const linux = (p: Pod) => generatePodSandboxConfig(p, 0, node).linux;

describe('generatePodSandboxConfig: the sandbox\'s security context (generatePodSandboxLinuxConfig)', () => {
  it('sysctls with slashes are given with dots (ConvertPodSysctlsVariableToDotsSeparator)', () => {
    const p = pod({ securityContext: { sysctls: [{ name: 'kernel/shm_rmid_forced', value: '1' }, { name: 'net.ipv4.ip_local_port_range', value: '1024 65000' }] } });
    assert.deepEqual(linux(p)?.sysctls, { 'kernel.shm_rmid_forced': '1', 'net.ipv4.ip_local_port_range': '1024 65000' });
  });
  it('RuntimeDefault seccomp, the pod\'s user and group, fsGroup then supplementalGroups', () => {
    const sc = linux(pod({ securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000] } }))?.securityContext;
    assert.deepEqual(sc?.seccomp, { profileType: 'RuntimeDefault' });
    assert.deepEqual(sc?.runAsUser, { value: '1000' });
    assert.deepEqual(sc?.runAsGroup, { value: '3000' });
    assert.deepEqual(sc?.supplementalGroups, ['2000', '4000']);
  });
  it('privileged when any container is, an ephemeral one included (HasPrivilegedContainer)', () => {
    assert.equal(linux(pod())?.securityContext?.privileged, false);
    const p = pod({ ephemeralContainers: [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }] });
    assert.equal(linux(p)?.securityContext?.privileged, true);
  });
  it('the hostname is the pod\'s, cut to 63 characters without a trailing dash', () => {
    assert.equal(generatePodSandboxConfig(pod({}, `${'a'.repeat(62)}-x`), 0, node).hostname, 'a'.repeat(62));
    assert.equal(generatePodSandboxConfig(pod({ hostname: 'h1' }), 0, node).hostname, 'h1');
  });
});
