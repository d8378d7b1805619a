import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { FakeClock } from '@app/clock/testing';
import { silentLogger } from '@app/observability';
import { KubeletAuthenticator, KubeletAuthorizer } from '../auth.js';
import { KubeletServer } from '../kubelet-server.js';
import { FakeAccessReviewer, FakeContainerLogServer, FakeKubeletPods, FakeNodeStats, FakeStreamingRuntime, FakeTokenReviewer, FakeUpgradeProxy } from '../testing.js';
import { HttpsListener } from './https-listener.js';
import { loadServingCertificate } from './serving-cert.js';

/** The TLS side: the self-signed serving certificate, and two instances on one port (docs/adr/0022). */
describe('HttpsListener and the serving certificate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ks-kubelet-pki-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a self-signed certificate for the node\'s name and IP once, its key mode 0600, and reuses it', () => {
    const first = loadServingCertificate({ certDir: dir, nodeName: 'node-a', nodeIP: '10.0.0.7' });
    assert.equal(first.generated, true);
    assert.equal(statSync(first.keyFile).mode & 0o777, 0o600);
    const x = new X509Certificate(first.cert);
    assert.match(x.subjectAltName ?? '', /DNS:node-a/);
    assert.match(x.subjectAltName ?? '', /IP Address:10\.0\.0\.7/);
    const again = loadServingCertificate({ certDir: dir, nodeName: 'node-a', nodeIP: '10.0.0.7' });
    assert.deepEqual([again.generated, again.cert.equals(first.cert)], [false, true]);
  });

  it('two instances listen on the same port, and each answers', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const { cert, key } = loadServingCertificate({ certDir: dir, nodeName: 'node-a', nodeIP: '127.0.0.1' });
    const listener = () => {
      const clock = new FakeClock();
      const kubelet = new KubeletServer(
        {
          authenticator: new KubeletAuthenticator(new FakeTokenReviewer(), clock, { anonymous: false, x509: false }),
          authorizer: new KubeletAuthorizer(new FakeAccessReviewer(), clock),
          pods: new FakeKubeletPods(),
          runtime: new FakeStreamingRuntime(),
          logs: new FakeContainerLogServer(),
          stats: new FakeNodeStats(),
          proxy: new FakeUpgradeProxy(),
          logger: silentLogger(),
        },
        'node-a',
      );
      return new HttpsListener(kubelet, { address: '127.0.0.1', port, cert, key }, silentLogger());
    };
    const [a, b] = [listener(), listener()];
    await a.listen();
    await b.listen(); // EADDRINUSE without reusePort
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 401);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
