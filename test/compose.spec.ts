/**
 * No Docker engine runs here, so docker-compose.yml is checked by reading
 * it: every app has a service built from the one Dockerfile with its APP,
 * every variable a service sets is one that service's config accepts (and
 * parses), and each has a /readyz health check.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseEnv } from '@app/config';
import { SERVICE_NAMES, serviceSchema } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { SERVICE_CONFIG_SCHEMAS } from './support/config-schemas.js';

const schemas = SERVICE_CONFIG_SCHEMAS;

interface ComposeService {
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
  it('has nats with JetStream and monitoring', () => {
    const nats = compose.services['nats'];
    assert.ok(nats);
    const cmd = (nats as { command?: string[] }).command ?? [];
    assert.ok(cmd.includes('-js') && cmd.includes('-m'), cmd.join(' '));
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

      it('has a /readyz health check on its PORT', () => {
        assert.match((svc?.healthcheck?.test ?? []).join(' '), /\/readyz/);
        assert.ok(svc?.environment?.['PORT'], 'PORT is set');
      });
    });
  }

  it('runs pod-worker with replicas', () => assert.ok((compose.services['pod-worker']?.deploy?.replicas ?? 1) > 1));
  it('mounts the containerd socket into cri-gateway only', () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      const mountsSocket = (svc.volumes ?? []).some((v) => v.includes('containerd'));
      assert.equal(mountsSocket, name === 'cri-gateway', name);
    }
  });
  it('mounts the manifest directory into config-source', () => {
    assert.ok((compose.services['config-source']?.volumes ?? []).some((v) => v.includes('/etc/kubernetes/manifests')));
  });
});
