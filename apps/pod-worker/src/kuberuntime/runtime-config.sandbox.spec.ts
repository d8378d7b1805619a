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
  describe('setHostnameAsFQDN: the hostname is the FQDN with a subdomain and the cluster domain (GetNodenameForKernel)', () => {
    const withDomain = { ...node, clusterDomain: 'cluster.local' };
    const cases = [
      { name: 'the FQDN', spec: { hostname: 'h1', subdomain: 'sub', setHostnameAsFQDN: true }, want: 'h1.sub.default.svc.cluster.local' },
      { name: 'without setHostnameAsFQDN: the short name', spec: { hostname: 'h1', subdomain: 'sub' }, want: 'h1' },
      { name: 'without a subdomain: the short name', spec: { hostname: 'h1', setHostnameAsFQDN: true }, want: 'h1' },
    ];
    for (const tc of cases) it(tc.name, () => assert.equal(generatePodSandboxConfig(pod(tc.spec), 0, withDomain).hostname, tc.want));
    it('an FQDN over 64 characters: refused', () => {
      assert.throws(() => generatePodSandboxConfig(pod({ hostname: 'h'.repeat(40), subdomain: 'sub', setHostnameAsFQDN: true }), 0, withDomain), /FQDN h{40}\.sub\.default\.svc\.cluster\.local is too long \(64 characters is the max, 70 characters requested\)/);
    });
  });
  it('the hostname is the pod\'s, cut to 63 characters without a trailing dash', () => {
    assert.equal(generatePodSandboxConfig(pod({}, `${'a'.repeat(62)}-x`), 0, node).hostname, 'a'.repeat(62));
    assert.equal(generatePodSandboxConfig(pod({ hostname: 'h1' }), 0, node).hostname, 'h1');
  });
});
