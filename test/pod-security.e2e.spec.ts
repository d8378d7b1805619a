/**
 * What the pod worker gives a container, as a user sees it from inside and
 * in GET /pods, on the real containerd (issue 18's security context,
 * /etc/hosts, termination message and sysctl specs): `id` under
 * runAsUser/runAsGroup/fsGroup/supplementalGroups, NoNewPrivs and CapEff in
 * /proc/self/status, a read-only root refusing a write, runAsNonRoot refusing
 * an image that runs as root, the kubelet-managed /etc/hosts with host
 * aliases (pod network and host network), termination messages from a file
 * (as a non-root user at a non-default path) and from the log, a sysctl
 * with slashes set, and an unsafe one refused at admission.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { NodeStack } from './support/node-stack.js';
import { runtimeKind } from './support/runtime.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const terminated = (s: V1PodStatus): V1ContainerStatus['state'] => s.containerStatuses?.[0]?.state;
const finished = (s: V1PodStatus) => s.phase === 'Succeeded' || s.phase === 'Failed';
/** A static pod; `spec` is YAML indented by two spaces, after restartPolicy Never. */
const manifest = (name: string, spec: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  restartPolicy: Never\n  terminationGracePeriodSeconds: 1\n${spec}`;

describe('security context, /etc/hosts, termination messages and sysctls on the real containerd', { timeout: 180_000 }, () => {
  const stack = new NodeStack({
    node: 'podsec-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
  });
  const out = () => join(stack.dir, 'out');
  const output = (file: string) => readFileSync(join(out(), file), 'utf8');
  const wrote = (file: string) => stack.waitFor(`${file} written`, () => (existsSync(join(out(), file)) && output(file).length > 0 ? output(file) : undefined), 60_000);
  const outVolume = () => `  volumes:\n    - { name: out, hostPath: { path: ${out()}, type: Directory } }\n`;
  const container = (command: string, extra = '') => `  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(command)}]\n      volumeMounts: [{ name: out, mountPath: /out }]\n${extra}`;

  before(async () => {
    await stack.start();
    mkdirSync(out(), { recursive: true });
    chmodSync(out(), 0o777); // the non-root containers write there too
    // Every pod at once: they are independent, and the test waits for each.
    stack.writeManifest(
      'hardened',
      manifest(
        'hardened',
        `  securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000] }\n` +
          container(
            "id > /out/hardened.tmp; grep -E '^(NoNewPrivs|CapEff):' /proc/self/status >> /out/hardened.tmp; touch /file 2>> /out/hardened.tmp; mv /out/hardened.tmp /out/hardened",
            `      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true }\n`,
          ) +
          outVolume(),
      ),
    );
    stack.writeManifest(
      'caps',
      manifest(
        'caps',
        container("grep -E '^(NoNewPrivs|CapEff):' /proc/self/status > /out/caps.tmp; mv /out/caps.tmp /out/caps", `      securityContext: { capabilities: { add: [NET_ADMIN], drop: [CHOWN] } }\n`) + outVolume(),
      ),
    );
    stack.writeManifest(
      'aliases',
      manifest(
        'aliases',
        `  hostAliases: [{ ip: 123.45.67.89, hostnames: [foo, bar] }]\n` +
          `  securityContext: { sysctls: [{ name: kernel/shm_rmid_forced, value: "1" }] }\n` +
          container('cat /etc/hosts > /out/aliases.tmp; cat /proc/sys/kernel/shm_rmid_forced > /out/sysctl; mv /out/aliases.tmp /out/aliases') +
          outVolume(),
      ),
    );
    stack.writeManifest(
      'hostnet',
      manifest('hostnet', `  hostNetwork: true\n  hostAliases: [{ ip: 123.45.67.89, hostnames: [foo, bar] }]\n` + container('cat /etc/hosts > /out/hostnet.tmp; mv /out/hostnet.tmp /out/hostnet') + outVolume()),
    );
    stack.writeManifest(
      'msgfile',
      manifest('msgfile', `  hostNetwork: true\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["/bin/sh", "-c", "/bin/echo -n DONE > /dev/termination-custom-log"]\n      terminationMessagePath: /dev/termination-custom-log\n      securityContext: { runAsUser: 10000 }\n`),
    );
    stack.writeManifest(
      'msglog',
      manifest('msglog', `  hostNetwork: true\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["/bin/sh", "-c", "/bin/echo -n DONE; /bin/false"]\n      terminationMessagePolicy: FallbackToLogsOnError\n`),
    );
    stack.writeManifest('nonroot', manifest('nonroot', `  hostNetwork: true\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["id", "-u"]\n      securityContext: { runAsNonRoot: true }\n`));
    stack.writeManifest(
      'unsafe',
      manifest('unsafe', `  securityContext: { sysctls: [{ name: kernel.msgmax, value: "10000000000" }] }\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["true"]\n`),
    );
  });
  after(() => stack.stop());

  it('runAsUser, runAsGroup, fsGroup and supplementalGroups in `id`; allowPrivilegeEscalation false sets NoNewPrivs; a read-only root refuses a write', async () => {
    const text = await wrote('hardened');
    const [id = '', ...rest] = text.trim().split('\n');
    assert.match(id, /^uid=1000 gid=3000 groups=/, text);
    const groups = (/groups=(.*)$/.exec(id)?.[1] ?? '').split(',').map((g) => g.replace(/\(.*\)/, ''));
    for (const g of ['2000', '4000']) assert.ok(groups.includes(g), `group ${g} in ${id}`);
    assert.ok(rest.includes('NoNewPrivs:\t1'), text);
    assert.ok(rest.includes('CapEff:\t0000000000000000'), text);
    assert.ok(rest.some((l) => /Read-only file system/.test(l)), text);
  });

  it("the API status says whom the container ran as where the runtime reports it (containerd 2's ContainerStatus.user), nothing where it does not (1.6)", async () => {
    await wrote('hardened');
    const s = await stack.waitForPod('hardened', 'finished', finished, 60_000);
    const user = s.containerStatuses?.[0]?.user;
    if (runtimeKind() === 'containerd2') {
      assert.equal(user?.linux?.uid, 1000, JSON.stringify(s.containerStatuses));
      assert.equal(user?.linux?.gid, 3000);
      for (const g of [2000, 4000]) assert.ok(user?.linux?.supplementalGroups?.includes(g), `group ${g} in ${JSON.stringify(user)}`);
    } else {
      assert.equal(user, undefined, JSON.stringify(s.containerStatuses));
    }
  });

  it('capabilities added and dropped are the container\'s effective set; no NoNewPrivs when allowPrivilegeEscalation is unset', async () => {
    const text = await wrote('caps');
    assert.ok(text.includes('NoNewPrivs:\t0'), text);
    const capEff = BigInt(`0x${/CapEff:\t([0-9a-f]+)/.exec(text)?.[1] ?? '0'}`);
    assert.equal(capEff & (1n << 12n), 1n << 12n, `CAP_NET_ADMIN in ${text}`);
    assert.equal(capEff & 1n, 0n, `no CAP_CHOWN in ${text}`);
    assert.equal(capEff & (1n << 6n), 1n << 6n, `the runtime's default CAP_SETGID kept in ${text}`);
  });

  it('the kubelet-managed /etc/hosts: localhost, the pod IP with its name, the host aliases; a sysctl with slashes is set', async () => {
    const hosts = await wrote('aliases');
    const s = await stack.waitForPod('aliases', 'finished', finished, 60_000);
    assert.equal(s.phase, 'Succeeded');
    assert.match(hosts, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
    assert.ok(s.podIP, 'a pod IP');
    assert.ok(hosts.includes(`\n${s.podIP ?? ''}\t${stack.podName('aliases')}\n`), hosts);
    assert.ok(hosts.endsWith('\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n'), hosts);
    assert.equal(output('sysctl'), '1\n');
  });

  it('a hostNetwork pod: the node\'s /etc/hosts under its own header, then the host aliases', async () => {
    const hosts = await wrote('hostnet');
    assert.equal(hosts, `# Kubernetes-managed hosts file (host network).\n${readFileSync('/etc/hosts', 'utf8')}\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n`);
  });

  it('termination messages: from the file, written as a non-root user at a non-default path; from the log with FallbackToLogsOnError', async () => {
    const file = await stack.waitForPod('msgfile', 'finished', finished, 60_000);
    assert.equal(file.phase, 'Succeeded');
    assert.equal(terminated(file)?.terminated?.message, 'DONE');
    const log = await stack.waitForPod('msglog', 'finished', finished, 60_000);
    assert.equal(log.phase, 'Failed');
    assert.equal(terminated(log)?.terminated?.exitCode, 1);
    assert.equal(terminated(log)?.terminated?.message, 'DONE');
  });

  it('runAsNonRoot with an image that runs as root: CreateContainerConfigError with upstream\'s message, nothing created', async () => {
    const s = await stack.waitForPod('nonroot', 'CreateContainerConfigError', (x) => terminated(x)?.waiting?.reason === 'CreateContainerConfigError', 60_000);
    assert.match(terminated(s)?.waiting?.message ?? '', /^container has runAsNonRoot and image will run as root \(pod: "nonroot-podsec-e2e_default\(.+\)", container: main\)$/);
    assert.deepEqual(await stack.containers('nonroot'), []);
  });

  it('an unsafe sysctl the node does not allow: rejected at admission, Failed with SysctlForbidden', async () => {
    const s = await stack.waitForPod('unsafe', 'Failed', (x) => x.phase === 'Failed', 60_000);
    assert.equal(s.reason, 'SysctlForbidden');
    assert.equal(s.message, 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted');
    assert.deepEqual(await stack.sandboxes('unsafe'), []);
  });
});
