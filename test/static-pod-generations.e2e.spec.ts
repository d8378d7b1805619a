/**
 * A static pod edited in place, on the real containerd (issue 28, item 2).
 * The kubelet derives a static pod's UID from a hash of the whole manifest
 * plus where it was read (pkg/kubelet/config/common.go applyDefaults), so an
 * edit of any field, `spec.volumes` here, is a new pod: the old generation is
 * killed and the new one started. Its pod workers start the new generation
 * only once the old one with the same full name has finished
 * (pod_workers.go allowStaticPodStart), so two generations never run at once
 * (host ports, volumes). What a user would look at: GET /pods (the UID, the
 * phase), what the new container sees in its volume, and containerd's
 * containers of the pod, sampled through the change.
 *
 * Two pod-worker replicas run, so the two generations may well be worked by
 * different replicas: the gate reads the node's `workers` and `pods`
 * buckets, not one replica's memory.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeletLabels } from '@app/kube';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';

describe('a static pod edit makes a new generation, started once the old one terminated', { timeout: 240_000 }, () => {
  const stack = new NodeStack({
    node: 'static-gen-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    // The kubelet's own back-off (10 s) would only make the wait for the old generation longer here.
    env: { 'pod-worker': { POD_SYNC_BACKOFF: '1s' } },
  });
  const v1 = join(stack.dir, 'v1');
  const v2 = join(stack.dir, 'v2');
  const out = join(stack.dir, 'out');

  before(async () => {
    for (const [dir, file] of [[v1, 'one'], [v2, 'two'], [out, '']] as const) {
      mkdirSync(dir, { recursive: true });
      if (file) writeFileSync(join(dir, file), file);
    }
    await stack.start();
    await stack.startService('pod-worker', '1');
  });
  after(() => stack.stop());

  // The container ignores SIGTERM, so the old generation runs for its whole 3 s grace period once killed:
  // a new generation started at once would run beside it for seconds.
  const manifest = (dataDir: string) => `apiVersion: v1
kind: Pod
metadata:
  name: gen
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 3
  containers:
    - name: main
      image: ${IMAGE}
      command: ["sh", "-c", "trap '' TERM; ls /data > /out/seen; while true; do sleep 1; done"]
      volumeMounts:
        - { name: data, mountPath: /data }
        - { name: out, mountPath: /out }
  volumes:
    - name: data
      hostPath: { path: ${dataDir} }
    - name: out
      hostPath: { path: ${out} }
`;

  const servedPod = async () => (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('gen'));
  const seen = () => (existsSync(join(out, 'seen')) ? readFileSync(join(out, 'seen'), 'utf8').trim() : '');

  it('an edit of spec.volumes: a new UID, the new volume seen, and the old generation gone before the new one runs', async () => {
    stack.writeManifest('gen', manifest(v1));
    const first = await stack.waitFor('gen Running', async () => {
      const p = await servedPod();
      return p?.status?.phase === 'Running' && seen() === 'one' ? p : undefined;
    }, 60_000);
    const oldUid = first.metadata?.uid ?? '';
    assert.ok(oldUid, 'GET /pods gives the pod a UID');

    stack.writeManifest('gen', manifest(v2));
    const editedAt = Date.now();
    // Sampled through the change: which generation has a running container, and when the new one got a sandbox.
    let samples = 0;
    let overlaps = 0;
    let oldLastRunningAt = 0;
    let newSandboxAt = 0;
    const sample = async () => {
      const [containers, sandboxes] = await Promise.all([stack.containers('gen'), stack.sandboxes('gen')]);
      const at = Date.now();
      samples++;
      const oldRunning = containers.some((c) => c.labels[KubeletLabels.podUid] === oldUid && c.state === 'CONTAINER_RUNNING');
      const newSandbox = sandboxes.find((s) => s.labels[KubeletLabels.podUid] !== oldUid);
      if (oldRunning) oldLastRunningAt = at;
      if (newSandbox && newSandboxAt === 0) newSandboxAt = Number(BigInt(newSandbox.createdAt) / 1_000_000n);
      if (oldRunning && newSandbox) overlaps++;
    };
    let newUid = '';
    try {
      await stack.waitFor('gen to run again with a new UID and the new volume', async () => {
        await sample();
        const p = await servedPod();
        const running = p?.status?.phase === 'Running' && p.metadata?.uid !== oldUid && seen() === 'two';
        if (running) newUid = p.metadata?.uid ?? '';
        return running ? true : undefined;
      }, 40_000);
    } finally {
      const p = await servedPod().catch(() => undefined);
      console.log(
        `# static pod edit: ${samples} samples over ${Date.now() - editedAt} ms; UID ${oldUid} -> ${p?.metadata?.uid ?? '?'} (${p?.status?.phase ?? '?'}); ` +
          `the container saw "${seen()}"; old generation last seen running ${oldLastRunningAt ? oldLastRunningAt - editedAt : '-'} ms after the edit, ` +
          `new sandbox created ${newSandboxAt ? newSandboxAt - editedAt : '-'} ms after it; samples with both: ${overlaps}`,
      );
    }
    assert.notEqual(newUid, oldUid, 'the edit made a new pod (a new UID), as the kubelet does');
    assert.equal(seen(), 'two', 'the new generation mounts the edited volume');
    assert.equal(overlaps, 0, 'no sample shows the old generation running beside the new one');
    assert.ok(newSandboxAt >= oldLastRunningAt, `the new sandbox (${newSandboxAt - editedAt} ms) came after the old container was last seen running (${oldLastRunningAt - editedAt} ms)`);
    // One pod of that name left on the node, and in containerd nothing of the old generation.
    const named = (await stack.podList()).items.filter((p) => p.metadata?.name === stack.podName('gen'));
    assert.deepEqual(named.map((p) => p.metadata?.uid), [newUid]);
    await stack.waitFor('the old generation to be gone from containerd', async () => ((await stack.sandboxes('gen')).every((s) => s.labels[KubeletLabels.podUid] === newUid) ? true : undefined));
  });
});
