import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '@app/config';
import { loadServiceConfig } from '@app/service';
import { kubeletServerConfigSchema } from './kubelet-server.config.js';
import { kubeletServerSettings } from './kubelet-server-agent.js';

const load = (env: Record<string, string>) => kubeletServerSettings(loadServiceConfig({ service: 'kubelet-server', schema: kubeletServerConfigSchema }, { NODE_NAME: 'node-a', ...env }));

/** The kubelet API server's settings as a node's operator writes them: on, off, or refused at boot. */
describe('kubelet API server settings', () => {
  it('joined to a cluster: on at 10250 on NODE_IP, Webhook authorization, anonymous off', () => {
    assert.deepEqual(load({ KUBECONFIG: '/etc/kubelet.conf', NODE_IP: '10.0.0.7' }), {
      address: '10.0.0.7',
      port: 10250,
      certDir: '/var/lib/kubelet-split/pki',
      anonymous: false,
      authorization: 'Webhook',
    });
  });

  it('defaults to loopback: NODE_IP\'s own default', () => assert.equal(load({ KUBECONFIG: '/k' })?.address, '127.0.0.1'));

  it('off: port 0, or neither KUBECONFIG nor a client CA (nothing could authenticate a request)', () => {
    assert.equal(load({ KUBECONFIG: '/k', KUBELET_SERVER_PORT: '0' }), undefined);
    assert.equal(load({}), undefined);
  });

  it('a client CA without a cluster: on, if authorization is AlwaysAllow', () => {
    assert.equal(load({ KUBELET_CLIENT_CA_FILE: '/ca.crt', KUBELET_AUTHORIZATION_MODE: 'AlwaysAllow' })?.clientCaFile, '/ca.crt');
  });

  const refused: { name: string; env: Record<string, string>; want: RegExp }[] = [
    { name: 'Webhook without KUBECONFIG', env: { KUBELET_CLIENT_CA_FILE: '/ca.crt' }, want: /KUBELET_AUTHORIZATION_MODE=Webhook needs KUBECONFIG/ },
    { name: 'a certificate without its key', env: { KUBECONFIG: '/k', KUBELET_TLS_CERT_FILE: '/c.crt' }, want: /KUBELET_TLS_CERT_FILE and KUBELET_TLS_PRIVATE_KEY_FILE go together/ },
    { name: 'anonymous with AlwaysAllow: anyone could exec', env: { KUBECONFIG: '/k', KUBELET_ANONYMOUS_AUTH: 'true', KUBELET_AUTHORIZATION_MODE: 'AlwaysAllow' }, want: /would let anyone exec/ },
    { name: 'a port out of range', env: { KUBECONFIG: '/k', KUBELET_SERVER_PORT: '70000' }, want: /KUBELET_SERVER_PORT must be at most 65535/ },
    { name: 'an address that is not an IP', env: { KUBECONFIG: '/k', KUBELET_SERVER_ADDRESS: 'node-a.local' }, want: /KUBELET_SERVER_ADDRESS must be an IPv4 or IPv6 address/ },
    { name: 'anonymous neither true nor false', env: { KUBECONFIG: '/k', KUBELET_ANONYMOUS_AUTH: 'yes' }, want: /KUBELET_ANONYMOUS_AUTH must be true or false/ },
  ];
  for (const tc of refused) {
    it(`refused at boot: ${tc.name}`, () => {
      assert.throws(() => load(tc.env), (e: unknown) => e instanceof ConfigError && tc.want.test(e.message));
    });
  }
});
