/**
 * docker-compose.yml read as data (the compose lane, `npm run test:compose`,
 * deploys it for real: deploy/compose/test.sh): every app is a service of the
 * one image with its command, every variable a service sets is one that
 * service's config accepts (and parses), each connects to NATS as its own
 * user, binds loopback on the host's network, and has a /readyz health check;
 * the one-process mode is a profile; .env.example sets every variable the
 * file reads.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseEnv } from '@app/config';
import { DEFAULT_PORTS, SERVICE_NAMES, STATUS_GROUP, isLoopbackHost, moduleEnv, moduleEnvPrefix, serviceSchema, type ServiceName } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { SERVICE_CONFIG_SCHEMAS } from './support/config-schemas.js';

const schemas = SERVICE_CONFIG_SCHEMAS;

interface ComposeService {
  image?: string;
  command?: string[];
  depends_on?: Record<string, { condition?: string }>;
  build?: { context?: string; dockerfile?: string; args?: Record<string, string> };
  environment?: Record<string, string>;
  healthcheck?: { test?: string[] };
  deploy?: { replicas?: number | string };
  volumes?: string[];
  network_mode?: string;
  profiles?: string[];
  restart?: string;
  user?: string;
}
const composeText = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
const compose = parse(composeText, { merge: true }) as { services: Record<string, ComposeService> };

/** ${VAR:-default} as compose would fill it with VAR unset. */
const interpolate = (v: string) => v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
/** Variables the image's entry point reads (deploy/compose/entrypoint.sh), not the service. */
const ENTRYPOINT_VARS = ['PORT_RANGE', 'PORT_LOCK_DIR'];
const IMAGE = 'kubelet-split/kubelet:local';

describe('docker-compose.yml', () => {
  it('has nats with the generated config: JetStream, one user per service held to the node, no monitoring port', () => {
    const nats = compose.services['nats'];
    assert.ok(nats);
    assert.deepEqual(nats.command, ['-c', '/credentials/nats-server.conf']);
    assert.ok((nats.volumes ?? []).includes('nats-credentials:/credentials:ro'));
    assert.equal(nats.depends_on?.['nats-credentials']?.condition, 'service_completed_successfully');
    // The one-shot service writes that config with the node's settings (JetStream store, the node) and the passwords.
    const gen = compose.services['nats-credentials'];
    assert.equal(gen?.command?.[0], 'nats-credentials', 'nats-credentials runs deploy/nats/credentials.ts (entrypoint.sh)');
    const flags = (gen.command ?? []).map(interpolate);
    for (const flag of ['--dir=/credentials', '--keep', '--store-dir=/data', '--listen=127.0.0.1:4222', '--node=node-1']) assert.ok(flags.includes(flag), flag);
    assert.ok(!flags.some((f) => f.startsWith('--http')), 'no monitoring port: it has no authentication (docs/adr/0029)');
    assert.ok(!/NATS_MONITOR/.test(composeText), 'nothing reads a monitoring port');
    assert.ok((gen.volumes ?? []).includes('nats-credentials:/credentials'));
    assert.equal(interpolate(nats.image ?? ''), 'kubelet-split/nats:local', 'the locally built nats image (deploy/compose/images.sh)');
    assert.ok((nats.volumes ?? []).includes('nats-data:/data'), 'JetStream on a volume');
    assert.equal(nats.network_mode, 'host');
    // Healthy once the client port's INFO says JetStream is on.
    assert.match(interpolate((nats.healthcheck?.test ?? []).join(' ')), /nc -w 1 127\.0\.0\.1 4222 .*"jetstream\\?":true/);
  });

  it('builds the one image from the one Dockerfile', () => {
    const gen = compose.services['nats-credentials'];
    assert.equal(gen?.build?.dockerfile, 'Dockerfile');
    assert.equal(interpolate(gen?.image ?? ''), IMAGE);
  });

  // The status group is one compose service (below); every other service is one of its own.
  for (const service of SERVICE_NAMES.filter((s) => !(STATUS_GROUP as readonly ServiceName[]).includes(s))) {
    describe(service, () => {
      const svc = compose.services[service];

      it('is a compose service of the one image, its command the service, on the host network, restarted', () => {
        assert.ok(svc, `no compose service ${service}`);
        assert.equal(interpolate(svc.image ?? ''), IMAGE);
        assert.deepEqual(svc.command, [service]);
        assert.equal(svc.network_mode, 'host');
        assert.equal(svc.restart, 'unless-stopped');
        assert.deepEqual(svc.profiles, ['services']);
        assert.equal(svc.depends_on?.['nats']?.condition, 'service_healthy');
      });

      it('sets only variables its config accepts, with values that parse', () => {
        const env = Object.fromEntries(Object.entries(svc?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
        const accepted = Object.keys(serviceSchema({ service, schema: schemas[service] }));
        for (const name of Object.keys(env)) assert.ok(accepted.includes(name) || ENTRYPOINT_VARS.includes(name), `${service} sets ${name}, which it does not read (it reads ${accepted.join(', ')})`);
        for (const name of ENTRYPOINT_VARS) delete env[name];
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

      it('has a /readyz health check on its PORT (or the port its replica took of PORT_RANGE)', () => {
        assert.match((svc?.healthcheck?.test ?? []).join(' '), /\/readyz/);
        assert.ok(svc?.environment?.['PORT'] ?? svc?.environment?.['PORT_RANGE'], 'PORT or PORT_RANGE is set');
      });
    });
  }

  describe('the status group (the status-manager service): status-manager, kubelet-server, node-status and console in one process', () => {
    const svc = compose.services['status-manager'];
    const env = Object.fromEntries(Object.entries(svc?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));

    it('is a compose service of the one image, its command the group (TARGET), on the host network, restarted', () => {
      assert.ok(svc, 'no compose service status-manager');
      assert.equal(interpolate(svc.image ?? ''), IMAGE);
      assert.deepEqual(svc.command, [STATUS_GROUP.join(',')]);
      assert.equal(svc.network_mode, 'host');
      assert.equal(svc.restart, 'unless-stopped');
      assert.deepEqual(svc.profiles, ['services']);
    });

    for (const service of STATUS_GROUP) {
      it(`${service}: connects as its own NATS user with its own password file, and reads only variables it accepts`, () => {
        assert.equal(env[`${moduleEnvPrefix(service)}NATS_PASSWORD_FILE`], `/run/secrets/nats/${service}.password`);
        const own = moduleEnv(service, env, STATUS_GROUP.length);
        const accepted = Object.keys(serviceSchema({ service, schema: schemas[service] }));
        assert.doesNotThrow(() => parseEnv(serviceSchema({ service, schema: schemas[service] }), Object.fromEntries(Object.entries(own).filter(([k]) => accepted.includes(k)))));
      });
    }

    it('binds loopback, and its health check asks every module\'s /readyz on its port', () => {
      assert.ok(isLoopbackHost(env['HOST'] ?? '127.0.0.1'));
      const check = (svc?.healthcheck?.test ?? []).join(' ');
      for (const service of STATUS_GROUP) assert.match(check, new RegExp(`\\b${DEFAULT_PORTS[service]}\\b`), service);
      assert.match(check, /\/readyz/);
    });
  });

  it('runs pod-worker with 2 replicas, each on its own port of a range', () => {
    const pw = compose.services['pod-worker'];
    assert.equal(Number(interpolate(String(pw?.deploy?.replicas ?? 1))), 2);
    assert.match(interpolate(pw?.environment?.['PORT_RANGE'] ?? ''), /^\d+-\d+$/);
    assert.ok((pw?.volumes ?? []).includes('pod-worker-ports:/run/kubelet-split-ports'), 'the replicas share their port locks');
  });
  // The one-process service (profile one-process) runs cri-gateway and sync-loop as modules: it mounts what they mount.
  it('mounts the containerd socket into cri-gateway (and the one-process service) only', () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      const mountsSocket = (svc.volumes ?? []).some((v) => v.includes('CONTAINERD_SOCKET_DIR') || v.includes('/run/containerd'));
      assert.equal(mountsSocket, name === 'cri-gateway' || name === 'kubelet', name);
    }
  });
  it("mounts containerd's root read-only into sync-loop (and the one-process service) only, for the image GC's statfs of the image filesystem", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      const root = (svc.volumes ?? []).filter((v) => v.includes('/var/lib/containerd'));
      assert.equal(root.length, name === 'sync-loop' || name === 'kubelet' ? 1 : 0, name);
      if (root[0]) assert.ok(root[0].endsWith(':ro'), `${name} mounts it read-only: ${root[0]}`);
    }
  });
  it('has the one-process mode as the profile one-process: TARGET=all, each module its own NATS user', () => {
    const k = compose.services['kubelet'];
    assert.deepEqual(k?.profiles, ['one-process']);
    assert.deepEqual(k?.command, ['all']);
    const env = k?.environment ?? {};
    assert.equal(env['TARGET'], 'all');
    for (const service of SERVICE_NAMES) assert.equal(env[`${moduleEnvPrefix(service)}NATS_PASSWORD_FILE`], `/run/secrets/nats/${service}.password`, service);
    assert.match((k?.healthcheck?.test ?? []).join(' '), /\/readyz/);
  });
  it('runs as root only the services that need it (the runtime socket, mounts, cgroups, /dev/kmsg, root\'s termination message files and logs)', () => {
    const root = Object.entries(compose.services).filter(([, svc]) => svc.user === 'root').map(([name]) => name).sort();
    assert.deepEqual(root, ['cri-gateway', 'kubelet', 'nats-credentials', 'pleg', 'pod-worker', 'status-manager', 'sync-loop']);
  });
  it('.env.example sets every variable the file reads', () => {
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    const set = new Set([...example.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]));
    const used = new Set([...composeText.matchAll(/(?<!\$)\$\{([A-Z_]+)/g)].map((m) => m[1]));
    assert.deepEqual([...used].filter((v) => !set.has(v)), []);
  });
  describe('joining a cluster (docs/adr/0036)', () => {
    const raw = (name: string) => compose.services[name]?.environment ?? {};
    const kubeDir = '${NODE_KUBE_DIR:-/etc/kubelet-split/kube}';
    it('gives the services that talk to the apiserver (config-source and the status group) NODE_KUBECONFIG as KUBECONFIG, and no other', () => {
      const joined = Object.entries(compose.services).filter(([, svc]) => 'KUBECONFIG' in (svc.environment ?? {})).map(([name]) => name).sort();
      assert.deepEqual(joined, ['config-source', 'status-manager']);
      for (const name of joined) assert.equal(raw(name)['KUBECONFIG'], '${NODE_KUBECONFIG:-}', name);
    });
    it('mounts NODE_KUBE_DIR read-only, at its host path, into those two only', () => {
      for (const [name, svc] of Object.entries(compose.services)) {
        const mounts = (svc.volumes ?? []).filter((v) => v.includes('NODE_KUBE_DIR'));
        assert.deepEqual(mounts, name === 'config-source' || name === 'status-manager' ? [`${kubeDir}:${kubeDir}:ro`] : [], name);
      }
    });
    it('serves the kubelet API on NODE_IP:KUBELET_SERVER_PORT with the certificates of .env; every other port on 127.0.0.1, each a setting', () => {
      const group = raw('status-manager');
      assert.equal(group['KUBELET_SERVER_PORT'], '${KUBELET_SERVER_PORT:-10250}');
      assert.equal(group['NODE_IP'], '${NODE_IP:-127.0.0.1}');
      assert.ok(!('KUBELET_SERVER_ADDRESS' in group), 'the kubelet server binds NODE_IP (KUBELET_SERVER_ADDRESS unset)');
      for (const v of ['KUBELET_CLIENT_CA_FILE', 'KUBELET_TLS_CERT_FILE', 'KUBELET_TLS_PRIVATE_KEY_FILE']) assert.equal(group[v], `\${${v}:-}`, v);
      for (const [name, svc] of Object.entries(compose.services)) {
        const env = svc.environment ?? {};
        if (name === 'nats-credentials' || name === 'nats' || name === 'kubelet') continue;
        assert.equal(env['HOST'] ?? '127.0.0.1', '127.0.0.1', name);
        for (const [k, v] of Object.entries(env)) if (/(^|__)PORT(_RANGE)?$/.test(k)) assert.match(String(v), /^\$\{[A-Z_]+:-\d+(-\d+)?\}$/, `${name} ${k}=${String(v)}: a setting of .env`);
      }
    });
  });
  it("sets every service's port from .env (KS_PORT_<SERVICE>, defaults the services' own), so that two projects run side by side", () => {
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    const group = compose.services['status-manager']?.environment ?? {};
    for (const service of SERVICE_NAMES.filter((s) => s !== 'pod-worker')) {
      const variable = `KS_PORT_${service.toUpperCase().replace(/-/g, '_')}`;
      const set = (STATUS_GROUP as readonly string[]).includes(service) ? group[`${moduleEnvPrefix(service)}PORT`] : compose.services[service]?.environment?.['PORT'];
      assert.equal(set, `\${${variable}:-${DEFAULT_PORTS[service]}}`, service);
      assert.match(example, new RegExp(`^${variable}=${DEFAULT_PORTS[service]}$`, 'm'), `.env.example's ${variable}`);
    }
  });
  it('mounts the manifest directory into config-source', () => {
    assert.ok((compose.services['config-source']?.volumes ?? []).some((v) => v.includes('/etc/kubernetes/manifests')));
  });
});
