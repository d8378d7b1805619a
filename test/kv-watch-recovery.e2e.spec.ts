/**
 * A dead KV watch on the real stack (issue 28, item 10): every watch
 * consumer of the node's KV buckets is deleted on the server while the node
 * runs a pod, then a new static pod is written. A pod worker syncs a pod by
 * waiting for the pod cache to be newer than its last sync (GetNewerThan,
 * pkg/kubelet/pod_workers.go): with its cache's watch dead, the PLEG's
 * inspections never reach it and the pod never starts; /pods, served from
 * watched mirrors, would not show it either. What a user checks: the new pod
 * is Running and Ready in GET /pods and its container runs in containerd,
 * within a bound well above the watches' liveness check (10 s) and a pod's
 * start on a loaded machine, well below what @nats-io/kv's own recovery of
 * a deleted consumer took (45-90 s, or never: kv-watch-recovery.int.spec.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jetstreamManager } from '@nats-io/jetstream';
import type { V1PodStatus } from '@kubernetes/client-node';
import { BUCKETS, kvStream } from '@app/nats';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'watch-e2e';
/** From the consumers' deletion to the new pod Running and Ready with its container in containerd. */
const BOUND_MS = 30_000;

const manifest = (name: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]\n`;
const runningAndReady = (s: V1PodStatus) => s.phase === 'Running' && (s.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

describe('the node runs a new pod after its KV watches died', { timeout: 180_000 }, () => {
  const stack = new NodeStack({ node: NODE, services: ['cri-gateway', 'status-manager', 'prober', 'pod-worker', 'sync-loop', 'config-source', 'pleg'] });
  before(() => stack.start());
  after(async () => {
    for (const name of ['first', 'second']) {
      try {
        stack.removeManifest(name);
      } catch {
        // never written: the test failed before it
      }
    }
    await stack.waitFor('the pods gone from containerd', async () => ((await stack.sandboxes('first')).length + (await stack.sandboxes('second')).length === 0 ? true : undefined), 30_000).catch(() => undefined);
    await stack.stop();
  });

  it('every watch consumer deleted on the server: a static pod written after still becomes Running and Ready', async () => {
    stack.writeManifest('first', manifest('first'));
    await stack.waitForPod('first', 'Running and Ready', runningAndReady, 60_000);

    const jsm = await jetstreamManager(stack.nc);
    let deleted = 0;
    for (const b of Object.values(BUCKETS)) {
      for (const c of await jsm.consumers.list(kvStream(b.name)).next()) {
        if (await jsm.consumers.delete(kvStream(b.name), c.name).catch(() => false)) deleted++;
      }
    }
    const t0 = performance.now();
    assert.ok(deleted > 0, 'no watch consumer to delete');
    stack.writeManifest('second', manifest('second'));
    const status = await stack.waitForPod('second', 'Running and Ready', runningAndReady, BOUND_MS);
    const running = (await stack.containers('second')).filter((c) => c.state === 'CONTAINER_RUNNING');
    const ms = performance.now() - t0;
    process.stdout.write(`# ${deleted} watch consumers deleted; the pod written after them Running and Ready in /pods after ${(ms / 1000).toFixed(1)} s\n`);
    assert.equal(running.length, 1, 'containerd runs its container');
    assert.equal(status.containerStatuses?.[0]?.containerID, `containerd://${running[0]?.id ?? ''}`, '/pods shows the container containerd runs');
    // Each pod-worker replica counts its pod cache's watch restarted for its lost consumer (KvReflector's metric).
    const metrics = await (await fetch(`http://127.0.0.1:${stack.procs.get('pod-worker#0')?.port ?? 0}/metrics`)).text();
    const restarts = /^kubelet_split_kv_watch_restarts_total\{[^}]*bucket="pod-cache"[^}]*reason="consumer-gone"[^}]*\} (\d+)/m.exec(metrics);
    assert.ok(Number(restarts?.[1] ?? 0) >= 1, `pod-worker's /metrics has no restart of its pod-cache watch:\n${metrics.split('\n').filter((l) => l.includes('kv_watch')).join('\n')}`);
  });
});
