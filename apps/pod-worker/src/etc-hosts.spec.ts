import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodSpec } from '@app/contracts';
import { containerMountsEtcHosts, etcHostsPath, managedHostsFileContent, nodeHostsFileContent, podHostnameAndDomain, shouldMountHostsFile } from './etc-hosts.js';

const pod = (spec: Partial<PodSpec> = {}, name = 'web'): Pod => ({ metadata: { name, namespace: 'ns1', uid: 'u1' }, spec: { containers: [{ name: 'c' }], ...spec } });

const LOCALHOST = '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';

describe('managedHostsFileContent (kubelet_pods.go)', () => {
  const cases: { name: string; pod: Pod; ips: string[]; want: string }[] = [
    { name: 'the pod IP with its name', pod: pod(), ips: ['10.88.0.5'], want: `# Kubernetes-managed hosts file.\n${LOCALHOST}10.88.0.5\tweb\n` },
    { name: 'spec.hostname over the name', pod: pod({ hostname: 'h1' }), ips: ['10.88.0.5'], want: `# Kubernetes-managed hosts file.\n${LOCALHOST}10.88.0.5\th1\n` },
    {
      name: 'with a subdomain: the FQDN first',
      pod: pod({ hostname: 'h1', subdomain: 'sub' }),
      ips: ['10.88.0.5', 'fd00::5'],
      want: `# Kubernetes-managed hosts file.\n${LOCALHOST}10.88.0.5\th1.sub.ns1.svc.cluster.local\th1\nfd00::5\th1.sub.ns1.svc.cluster.local\th1\n`,
    },
    {
      name: 'host aliases after a blank line and their comment, names tab-separated',
      pod: pod({ hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo', 'bar'] }, { ip: '10.1.2.3', hostnames: ['baz'] }] }),
      ips: ['10.88.0.5'],
      want: `# Kubernetes-managed hosts file.\n${LOCALHOST}10.88.0.5\tweb\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n10.1.2.3\tbaz\n`,
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(managedHostsFileContent(tc.pod, tc.ips, 'cluster.local'), tc.want));
});

describe('nodeHostsFileContent: a hostNetwork pod gets the node\'s file', () => {
  it('under the host network header, then the aliases', () => {
    assert.equal(
      nodeHostsFileContent(pod({ hostNetwork: true, hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo', 'bar'] }] }), '127.0.0.1 localhost\n'),
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n',
    );
  });
});

describe('where and when', () => {
  it('the file is in the pod directory', () => assert.equal(etcHostsPath(pod(), '/var/lib/kubelet/pods'), '/var/lib/kubelet/pods/u1/etc-hosts'));
  it('mounted once the pod has an IP, or on the host network', () => {
    assert.equal(shouldMountHostsFile(pod(), []), false);
    assert.equal(shouldMountHostsFile(pod(), ['10.88.0.5']), true);
    assert.equal(shouldMountHostsFile(pod({ hostNetwork: true }), []), true);
  });
  it('not over a container\'s own mount at /etc/hosts', () => {
    assert.equal(containerMountsEtcHosts({ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/etc/hosts-original' }] }), false);
    assert.equal(containerMountsEtcHosts({ name: 'c', volumeMounts: [{ name: 'v', mountPath: '/etc/hosts' }] }), true);
  });
  it('a hostname longer than 63 characters is cut, without a trailing dash or dot', () => {
    assert.equal(podHostnameAndDomain(pod({}, `${'a'.repeat(62)}-bcd`)).hostname, 'a'.repeat(62));
  });
});
