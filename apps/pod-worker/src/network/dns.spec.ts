/** Upstream's pkg/kubelet/network/dns/dns_test.go, its cases ported. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodSpec } from '@app/contracts';
import { generatePodSandboxConfig } from '../kuberuntime/runtime-config.js';
import { checkLimitsForResolvConf, getPodDNS, mergeDNSOptions, nameserversFitLimits, parseResolvConf, podDNSType, searchesFitLimits, type DNSConfig, type DNSFacts, type PodDNSType } from './dns.js';

const pod = (spec: Partial<PodSpec> = {}): Pod => ({ metadata: { name: 'test_pod', namespace: 'testNS', uid: 'u1' }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
const sorted = (xs: readonly string[]) => [...xs].sort();

describe('podDNSType (TestGetPodDNSType)', () => {
  const cases: { name: string; spec: Partial<PodSpec>; want: PodDNSType }[] = [
    { name: 'ClusterFirst without the host network', spec: { dnsPolicy: 'ClusterFirst' }, want: 'cluster' },
    { name: 'ClusterFirstWithHostNet on the host network', spec: { dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }, want: 'cluster' },
    { name: 'ClusterFirstWithHostNet without the host network', spec: { dnsPolicy: 'ClusterFirstWithHostNet' }, want: 'cluster' },
    { name: 'Default without the host network', spec: { dnsPolicy: 'Default' }, want: 'host' },
    { name: 'Default on the host network', spec: { dnsPolicy: 'Default', hostNetwork: true }, want: 'host' },
    { name: 'ClusterFirst on the host network falls back to Default', spec: { dnsPolicy: 'ClusterFirst', hostNetwork: true }, want: 'host' },
    { name: 'None', spec: { dnsPolicy: 'None' }, want: 'none' },
    { name: 'unset: the API default, ClusterFirst', spec: {}, want: 'cluster' },
    { name: 'unset on the host network: ClusterFirst\'s fallback', spec: { hostNetwork: true }, want: 'host' },
    { name: 'an unknown policy: the cluster\'s, as upstream falls back', spec: { dnsPolicy: 'invalidPolicy' }, want: 'cluster' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(podDNSType(pod(tc.spec)), tc.want));
});

describe('getPodDNS (TestGetPodDNS, TestGetPodDNSCustom)', () => {
  const hostDns: DNSConfig = { servers: ['192.0.2.1'], searches: ['host.domain'], options: ['timeout:2'] };
  const facts: DNSFacts = { hostDns, clusterDns: ['10.0.0.10'], clusterDomain: 'kubernetes.io' };
  const clusterSearches = ['testNS.svc.kubernetes.io', 'svc.kubernetes.io', 'kubernetes.io'];
  const podConfig = { nameservers: ['10.0.0.11'], searches: ['my.domain'], options: [{ name: 'ndots', value: '3' }, { name: 'debug' }] };
  const cases: { name: string; spec: Partial<PodSpec>; facts?: DNSFacts; want: DNSConfig; events?: string[] }[] = [
    { name: 'None without a dnsConfig: empty', spec: { dnsPolicy: 'None' }, want: { servers: [], searches: [], options: [] } },
    {
      name: 'None with a dnsConfig: the dnsConfig only',
      spec: { dnsPolicy: 'None', dnsConfig: { nameservers: ['203.0.113.1'], searches: ['my.domain', 'second.domain'], options: [{ name: 'ndots', value: '3' }, { name: 'debug' }] } },
      want: { servers: ['203.0.113.1'], searches: ['my.domain', 'second.domain'], options: ['ndots:3', 'debug'] },
    },
    { name: 'ClusterFirst: the cluster DNS only, the cluster search paths then the node\'s, ndots:5 instead of the node\'s options', spec: { dnsPolicy: 'ClusterFirst' }, want: { servers: ['10.0.0.10'], searches: [...clusterSearches, 'host.domain'], options: ['ndots:5'] } },
    { name: 'ClusterFirst with a dnsConfig: appended and merged', spec: { dnsPolicy: 'ClusterFirst', dnsConfig: podConfig }, want: { servers: ['10.0.0.10', '10.0.0.11'], searches: [...clusterSearches, 'host.domain', 'my.domain'], options: ['ndots:3', 'debug'] } },
    { name: 'ClusterFirstWithHostNet on the host network, with a dnsConfig', spec: { dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true, dnsConfig: podConfig }, want: { servers: ['10.0.0.10', '10.0.0.11'], searches: [...clusterSearches, 'host.domain', 'my.domain'], options: ['ndots:3', 'debug'] } },
    { name: 'ClusterFirst on the host network: the node\'s', spec: { dnsPolicy: 'ClusterFirst', hostNetwork: true }, want: hostDns },
    { name: 'Default with a dnsConfig: the node\'s, then the pod\'s', spec: { dnsPolicy: 'Default', dnsConfig: podConfig }, want: { servers: ['192.0.2.1', '10.0.0.11'], searches: ['host.domain', 'my.domain'], options: ['timeout:2', 'ndots:3', 'debug'] } },
    { name: 'ClusterFirst without a cluster domain: the node\'s search paths only', spec: { dnsPolicy: 'ClusterFirst' }, facts: { hostDns, clusterDns: ['10.0.0.10'] }, want: { servers: ['10.0.0.10'], searches: ['host.domain'], options: ['ndots:5'] } },
    {
      name: 'ClusterFirst without a cluster DNS: the node\'s, MissingClusterDNS on the node and the pod',
      spec: { dnsPolicy: 'ClusterFirst' },
      facts: { hostDns, clusterDns: [], clusterDomain: 'kubernetes.io' },
      want: hostDns,
      events: [
        'node MissingClusterDNS kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
        'pod MissingClusterDNS pod: "test_pod_testNS(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
      ],
    },
    { name: 'a node search path the cluster\'s already has: once', spec: { dnsPolicy: 'ClusterFirst' }, facts: { ...facts, hostDns: { ...hostDns, searches: ['kubernetes.io', 'host.domain'] } }, want: { servers: ['10.0.0.10'], searches: [...clusterSearches, 'host.domain'], options: ['ndots:5'] } },
    {
      name: 'four nameservers: the first three, DNSConfigForming',
      spec: { dnsPolicy: 'ClusterFirst', dnsConfig: { nameservers: ['10.0.0.11', '10.0.0.12', '10.0.0.13'] } },
      want: { servers: ['10.0.0.10', '10.0.0.11', '10.0.0.12'], searches: [...clusterSearches, 'host.domain'], options: ['ndots:5'] },
      events: ['pod DNSConfigForming Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.10 10.0.0.11 10.0.0.12'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const { config, events } = getPodDNS(pod(tc.spec), tc.facts ?? facts);
      assert.deepEqual({ ...config, options: sorted(config.options) }, { ...tc.want, options: sorted(tc.want.options) });
      assert.deepEqual(events.map((e) => `${e.on} ${e.reason} ${e.message}`), tc.events ?? []);
    });
  }

  it('the sandbox gets it (generatePodSandboxConfig)', () => {
    const node = { nodeName: 'n1', hostIP: '10.0.0.1', logRoot: '/var/log/pods', podRoot: '/var/lib/kubelet/pods', ...facts };
    assert.deepEqual(generatePodSandboxConfig(pod({ dnsPolicy: 'ClusterFirst' }), 0, node).dnsConfig, { servers: ['10.0.0.10'], searches: [...clusterSearches, 'host.domain'], options: ['ndots:5'] });
  });

});

describe('mergeDNSOptions (TestMergeDNSOptions)', () => {
  const cases = [
    { name: 'no pod options', existing: ['ndots:5', 'debug'], pod: undefined, want: ['ndots:5', 'debug'] },
    { name: 'no duplicates', existing: ['ndots:5', 'debug'], pod: [{ name: 'single-request' }, { name: 'attempts', value: '3' }], want: ['ndots:5', 'debug', 'single-request', 'attempts:3'] },
    {
      name: 'duplicates: the pod\'s win, in the place the name first had',
      existing: ['ndots:5', 'debug'],
      pod: [{ name: 'ndots', value: '3' }, { name: 'debug' }, { name: 'single-request' }, { name: 'attempts', value: '3' }],
      want: ['ndots:3', 'debug', 'single-request', 'attempts:3'],
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.deepEqual(mergeDNSOptions(tc.existing, tc.pod), tc.want));
});

describe('nameserversFitLimits (TestFormDNSNameserversFitsLimits)', () => {
  const cases = [
    { name: 'one nameserver', servers: ['127.0.0.1'], want: ['127.0.0.1'], event: false },
    { name: 'three nameservers', servers: ['127.0.0.1', '10.0.0.10', '8.8.8.8'], want: ['127.0.0.1', '10.0.0.10', '8.8.8.8'], event: false },
    { name: 'four nameservers: trimmed to three', servers: ['127.0.0.1', '10.0.0.10', '8.8.8.8', '1.2.3.4'], want: ['127.0.0.1', '10.0.0.10', '8.8.8.8'], event: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = nameserversFitLimits(tc.servers);
      assert.deepEqual(got.servers, tc.want);
      assert.equal(got.event !== undefined, tc.event);
    });
  }
});

describe('searchesFitLimits (TestFormDNSSearchFitsLimits)', () => {
  // 2048 = 128 + 127 * 15 + 15 (the spaces)
  const list2048 = ['A'.repeat(128), ...Array.from({ length: 15 }, () => 'A'.repeat(127))];
  const thirtyTwo = ['testNS.svc.TEST', 'svc.TEST', 'TEST', ...Array.from({ length: 29 }, (_, i) => String(i + 4))];
  const applied = (line: string[]) => `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${line.join(' ')}`;
  const cases = [
    { name: 'three search paths', searches: ['testNS.svc.TEST', 'svc.TEST', 'TEST'], want: ['testNS.svc.TEST', 'svc.TEST', 'TEST'] },
    { name: 'five search paths', searches: ['testNS.svc.TEST', 'svc.TEST', 'TEST', 'AAA', 'BBB'], want: ['testNS.svc.TEST', 'svc.TEST', 'TEST', 'AAA', 'BBB'] },
    {
      name: 'a search path of 256 characters: left out',
      searches: ['testNS.svc.TEST', 'svc.TEST', 'TEST', 'AAA', 'B'.repeat(256), 'BBB'],
      want: ['testNS.svc.TEST', 'svc.TEST', 'TEST', 'AAA', 'BBB'],
      event: applied(['testNS.svc.TEST', 'svc.TEST', 'TEST', 'AAA', 'BBB']),
    },
    { name: 'a line of 2048 characters', searches: list2048, want: list2048 },
    { name: 'a line of 2050 characters: the last path cut', searches: [...list2048, 'B'], want: list2048, event: applied(list2048) },
    { name: '32 search paths', searches: thirtyTwo, want: thirtyTwo },
    { name: '33 search paths: the first 32', searches: [...thirtyTwo, '33'], want: thirtyTwo, event: applied(thirtyTwo) },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = searchesFitLimits(tc.searches);
      assert.deepEqual(got.searches, tc.want);
      assert.equal(got.event?.message, tc.event);
    });
  }
});

describe('checkLimitsForResolvConf (CheckLimitsForResolvConf)', () => {
  const paths = (n: number) => Array.from({ length: n }, (_, i) => `d${i}`);
  const cases = [
    { name: '29 search paths with a cluster domain: room for its three', searches: paths(29), domain: 'cluster.local', want: undefined },
    { name: '30 search paths with a cluster domain', searches: paths(30), domain: 'cluster.local', want: "Resolv.conf file '/etc/resolv.conf' contains search line consisting of more than 29 domains!" },
    { name: '32 search paths without a cluster domain', searches: paths(32), domain: undefined, want: undefined },
    { name: '33 search paths without a cluster domain', searches: paths(33), domain: undefined, want: "Resolv.conf file '/etc/resolv.conf' contains search line consisting of more than 32 domains!" },
    { name: 'a search path of 254 characters', searches: ['a'.repeat(254)], domain: undefined, want: 'Resolv.conf file "/etc/resolv.conf" contains a search path which length is more than allowed 253 chars!' },
    // 8 * 253 + 7 spaces + 1 + 17 = 2049
    { name: 'a line of 2049 characters', searches: [...Array.from({ length: 8 }, () => 'a'.repeat(253)), 'b'.repeat(17)], domain: undefined, want: "Resolv.conf file '/etc/resolv.conf' contains search line which length is more than allowed 2048 chars!" },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(checkLimitsForResolvConf('/etc/resolv.conf', tc.searches, tc.domain), tc.want));
});

describe('parseResolvConf (TestParseResolvConf)', () => {
  const cases: { data: string; servers?: string[]; searches?: string[]; options?: string[]; error?: boolean }[] = [
    { data: '' },
    { data: ' ' },
    { data: '\n' },
    { data: '\t\n\t' },
    { data: '#comment\n' },
    { data: ' #comment\n' },
    { data: '#comment\n#comment' },
    { data: '#comment\nnameserver', error: true },
    { data: '#comment\nnameserver\nsearch', error: true },
    { data: '#comment\nnameserver 1.2.3.4\nsearch', servers: ['1.2.3.4'] },
    { data: 'nameserver 1.2.3.4', servers: ['1.2.3.4'] },
    { data: ' nameserver 1.2.3.4', servers: ['1.2.3.4'] },
    { data: '\tnameserver 1.2.3.4', servers: ['1.2.3.4'] },
    { data: 'nameserver\t1.2.3.4', servers: ['1.2.3.4'] },
    { data: 'nameserver \t 1.2.3.4', servers: ['1.2.3.4'] },
    { data: 'nameserver 1.2.3.4\nnameserver 5.6.7.8', servers: ['1.2.3.4', '5.6.7.8'] },
    { data: 'nameserver 1.2.3.4 #comment', servers: ['1.2.3.4'] },
    { data: 'search ' },
    { data: 'search .' },
    { data: 'search . foo', searches: ['foo'] },
    { data: 'search foo .', searches: ['foo'] },
    { data: 'search foo .  bar', searches: ['foo', 'bar'] },
    { data: 'search foo', searches: ['foo'] },
    { data: 'search foo bar', searches: ['foo', 'bar'] },
    { data: 'search foo. bar', searches: ['foo', 'bar'] },
    { data: 'search foo bar bat\n', searches: ['foo', 'bar', 'bat'] },
    { data: 'search foo\nsearch bar', searches: ['bar'] },
    { data: 'nameserver 1.2.3.4\nsearch foo bar', servers: ['1.2.3.4'], searches: ['foo', 'bar'] },
    { data: 'nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar', servers: ['1.2.3.4', '5.6.7.8'], searches: ['bar'] },
    { data: '#comment\nnameserver 1.2.3.4\n#comment\nsearch foo\ncomment', servers: ['1.2.3.4'], searches: ['foo'] },
    { data: 'options ' },
    { data: 'options ndots:5 attempts:2', options: ['ndots:5', 'attempts:2'] },
    { data: 'options ndots:1 ndots:5 attempts:2', options: ['ndots:5', 'attempts:2'] },
    { data: 'options ndots:1 edns0 attempts:2 single-request-reopen', options: ['edns0', 'attempts:2', 'single-request-reopen', 'ndots:1'] },
    { data: 'options ndots:1\noptions ndots:5 attempts:3', options: ['ndots:5', 'attempts:3'] },
    { data: 'options ndots:1 timeout:3 timeout:1 attempts:3\noptions ndots:5', options: ['ndots:5', 'timeout:1', 'attempts:3'] },
    { data: 'options ndots:1 attempts:3\noptions ndots:1 attempts:3 ndots:5', options: ['ndots:5', 'attempts:3'] },
    { data: 'nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar\noptions ndots:5 attempts:4', servers: ['1.2.3.4', '5.6.7.8'], searches: ['bar'], options: ['ndots:5', 'attempts:4'] },
  ];
  for (const tc of cases) {
    it(JSON.stringify(tc.data), () => {
      const got = parseResolvConf(tc.data);
      assert.equal(got.errors.length > 0, tc.error === true, got.errors.join('; '));
      if (tc.error) return;
      assert.deepEqual(got.servers, tc.servers ?? []);
      assert.deepEqual(got.searches, tc.searches ?? []);
      assert.deepEqual(sorted(got.options), sorted(tc.options ?? []));
    });
  }
});
