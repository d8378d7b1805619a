import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Service, ServicePort } from '@app/contracts';
import { fromServices, getServiceEnvVarMap } from './envvars.js';

const svc = (namespace: string, name: string, clusterIP: string, ports: ServicePort[]): Service => ({ metadata: { namespace, name }, spec: { clusterIP, ports } });

describe('fromServices (envvars.go)', () => {
  it('the e2e spec\'s fooservice: one unnamed TCP port', () => {
    const got = fromServices([svc('ns', 'fooservice', '10.0.0.11', [{ port: 8765, targetPort: 8080 }])]);
    assert.deepEqual(got, [
      { name: 'FOOSERVICE_SERVICE_HOST', value: '10.0.0.11' },
      { name: 'FOOSERVICE_SERVICE_PORT', value: '8765' },
      { name: 'FOOSERVICE_PORT', value: 'tcp://10.0.0.11:8765' },
      { name: 'FOOSERVICE_PORT_8765_TCP', value: 'tcp://10.0.0.11:8765' },
      { name: 'FOOSERVICE_PORT_8765_TCP_PROTO', value: 'tcp' },
      { name: 'FOOSERVICE_PORT_8765_TCP_PORT', value: '8765' },
      { name: 'FOOSERVICE_PORT_8765_TCP_ADDR', value: '10.0.0.11' },
    ]);
  });

  it('dashes become underscores; named ports get their own SERVICE_PORT_<NAME>; UDP and an IPv6 cluster IP', () => {
    const got = new Map(fromServices([svc('ns', 'my-dns', 'fd00::a', [{ name: 'dns-tcp', port: 53, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }])]).map((e) => [e.name, e.value]));
    assert.equal(got.get('MY_DNS_SERVICE_HOST'), 'fd00::a');
    assert.equal(got.get('MY_DNS_SERVICE_PORT'), '53');
    assert.equal(got.get('MY_DNS_SERVICE_PORT_DNS_TCP'), '53');
    assert.equal(got.get('MY_DNS_SERVICE_PORT_DNS'), '53');
    assert.equal(got.get('MY_DNS_PORT'), 'tcp://[fd00::a]:53');
    assert.equal(got.get('MY_DNS_PORT_53_UDP'), 'udp://[fd00::a]:53');
    assert.equal(got.get('MY_DNS_PORT_53_UDP_PROTO'), 'udp');
  });

  it('a headless service (clusterIP None) or one without an IP has no variables', () => {
    assert.deepEqual(fromServices([svc('ns', 'headless', 'None', [{ port: 80 }]), svc('ns', 'pending', '', [{ port: 80 }])]), []);
  });
});

describe('getServiceEnvVarMap (kubelet_pods.go)', () => {
  const kubernetes = svc('default', 'kubernetes', '10.0.0.1', [{ name: 'https', port: 443 }]);
  const services = [kubernetes, svc('ns', 'fooservice', '10.0.0.11', [{ port: 8765 }]), svc('other', 'barservice', '10.0.0.12', [{ port: 80 }]), svc('default', 'web', '10.0.0.13', [{ port: 80 }])];
  const cases: { name: string; namespace: string; links: boolean; want: string[] }[] = [
    { name: 'links on: the namespace\'s services and the master service', namespace: 'ns', links: true, want: ['FOOSERVICE', 'KUBERNETES'] },
    { name: 'links off: only the master service', namespace: 'ns', links: false, want: ['KUBERNETES'] },
    { name: 'a pod of default: its services and the master one', namespace: 'default', links: true, want: ['KUBERNETES', 'WEB'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const hosts = [...getServiceEnvVarMap(services, tc.namespace, tc.links).keys()].filter((k) => k.endsWith('_SERVICE_HOST')).map((k) => k.replace(/_SERVICE_HOST$/, ''));
      assert.deepEqual(hosts, tc.want);
    });
  }

  it('a service named kubernetes in the pod\'s namespace wins over the master one', () => {
    const m = getServiceEnvVarMap([kubernetes, svc('ns', 'kubernetes', '10.0.0.99', [{ port: 80 }])], 'ns', true);
    assert.equal(m.get('KUBERNETES_SERVICE_HOST'), '10.0.0.99');
  });

  it('no services (a node that has not joined a cluster): no variables', () => {
    assert.equal(getServiceEnvVarMap([], 'ns', true).size, 0);
  });
});
