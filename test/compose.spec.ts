/**
 * No Docker engine runs here, so docker-compose.yml is checked by reading
 * it: every app has a service built from the one Dockerfile with its APP,
 * every variable a service sets is one that service's config accepts (and
 * parses), each connects to NATS as its own user, binds loopback, and has a
 * /readyz health check.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseEnv } from '@app/config';
import { SERVICE_NAMES, isLoopbackHost, serviceSchema } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { SERVICE_CONFIG_SCHEMAS } from './support/config-schemas.js';

const schemas = SERVICE_CONFIG_SCHEMAS;

interface ComposeService {
  command?: string[];
  depends_on?: Record<string, { condition?: string }>;
  build?: { context?: string; dockerfile?: string; args?: Record<string, string> };
  environment?: Record<string, string>;
  healthcheck?: { test?: string[] };
  deploy?: { replicas?: number };
  volumes?: string[];
}
const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };

/** ${VAR:-default} as compose would fill it with VAR unset. */
const interpolate = (v: string) => v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

describe('docker-compose.yml', () => {
  it('has nats with the generated config: JetStream, monitoring and one user per service', () => {
    const nats = compose.services['nats'];
    assert.ok(nats);
    assert.deepEqual(nats.command, ['-c', '/credentials/nats-server.conf']);
    assert.ok((nats.volumes ?? []).includes('nats-credentials:/credentials:ro'));
    assert.equal(nats.depends_on?.['nats-credentials']?.condition, 'service_completed_successfully');
    // The one-shot service writes that config with the node's settings (JetStream store, monitoring) and the passwords.
    const gen = compose.services['nats-credentials'];
    assert.ok(gen?.command?.[1] === 'dist/deploy/nats/credentials.js', 'nats-credentials runs deploy/nats/credentials.ts');
    for (const flag of ['--dir=/credentials', '--keep', '--store-dir=/data', '--http=0.0.0.0:8222']) assert.ok(gen.command.includes(flag), flag);
    assert.ok((gen.volumes ?? []).includes('nats-credentials:/credentials'));
  });

  for (const service of SERVICE_NAMES) {
    describe(service, () => {
      const svc = compose.services[service];

      it('is a compose service built from the one Dockerfile with its APP', () => {
        assert.ok(svc, `no compose service ${service}`);
        assert.equal(svc.build?.dockerfile, 'Dockerfile');
        assert.equal(svc.build?.args?.['APP'], service);
      });

      it('sets only variables its config accepts, with values that parse', () => {
        const env = Object.fromEntries(Object.entries(svc?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
        const accepted = Object.keys(serviceSchema({ service, schema: schemas[service] }));
        for (const name of Object.keys(env)) assert.ok(accepted.includes(name), `${service} sets ${name}, which it does not read (it reads ${accepted.join(', ')})`);
        assert.doesNotThrow(() => parseEnv(serviceSchema({ service, schema: schemas[service] }), env));
      });

      it('connects to NATS as its own user, with its own password file from the credentials volume', () => {
        const env = svc?.environment ?? {};
        assert.equal(env['NATS_USER'] ?? service, service);
        const file = env['NATS_PASSWORD_FILE'] ?? '';
        assert.equal(file, `/run/secrets/nats/${service}.password`);
        assert.ok((svc?.volumes ?? []).includes('nats-credentials:/run/secrets/nats:ro'), 'the credentials volume is mounted read-only');
      });

      it('binds its HTTP port to loopback, or requires a token', () => {
        const env = svc?.environment ?? {};
        assert.ok(isLoopbackHost(env['HOST'] ?? '127.0.0.1') || env['HTTP_TOKEN_FILE'], `HOST=${env['HOST']} without HTTP_TOKEN_FILE`);
      });

      it('has a /readyz health check on its PORT', () => {
        assert.match((svc?.healthcheck?.test ?? []).join(' '), /\/readyz/);
        assert.ok(svc?.environment?.['PORT'], 'PORT is set');
      });
    });
  }

  it('runs pod-worker with replicas', () => assert.ok((compose.services['pod-worker']?.deploy?.replicas ?? 1) > 1));
  it('mounts the containerd socket into cri-gateway only', () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      const mountsSocket = (svc.volumes ?? []).some((v) => v.includes('CONTAINERD_SOCKET_DIR') || v.includes('/run/containerd'));
      assert.equal(mountsSocket, name === 'cri-gateway', name);
    }
  });
  it("mounts containerd's root read-only into sync-loop only, for the image GC's statfs of the image filesystem", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      const root = (svc.volumes ?? []).filter((v) => v.includes('/var/lib/containerd'));
      assert.equal(root.length, name === 'sync-loop' ? 1 : 0, name);
      if (root[0]) assert.ok(root[0].endsWith(':ro'), `${name} mounts it read-only: ${root[0]}`);
    }
  });
  it('mounts the manifest directory into config-source', () => {
    assert.ok((compose.services['config-source']?.volumes ?? []).some((v) => v.includes('/etc/kubernetes/manifests')));
  });
});
