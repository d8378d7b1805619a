/**
 * `/stats/summary` and `/metrics/resource` on the real stack and containerd:
 * the summary parses into the Summary API types with the pods and their
 * containers, the node's figures are sane, a container burning a CPU shows
 * it (an idle one does not), a pod's volumes show what was written into
 * them (bounded by their filesystem: a memory-backed one by its tmpfs) and
 * count in its ephemeral storage, and the resource metrics have the
 * kubelet's series for the pod.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PodStats, Summary } from '@app/stats';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const pod = (name: string, command: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(command)}]\n`;

describe('/stats/summary and /metrics/resource on the real stack', { timeout: 240_000 }, () => {
  const stack = new NodeStack({ node: 'stats-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'] });
  const summary = async (): Promise<Summary> => {
    const res = await fetch(`${stack.api}/stats/summary`);
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as Summary;
  };
  const podOf = (s: Summary, name: string): PodStats | undefined => s.pods.find((p) => p.podRef.name === stack.podName(name) && p.podRef.namespace === 'default');

  before(async () => {
    await stack.start();
    stack.writeManifest('burn', pod('burn', 'while :; do :; done'));
    stack.writeManifest('idle', pod('idle', 'sleep 3600'));
    for (const name of ['burn', 'idle']) await stack.waitForPod(name, 'Running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
  });
  after(() => stack.stop());

  it('serves the node and both pods, with their container, in the Summary API shape', async () => {
    const s = await stack.waitFor('both pods in /stats/summary', async () => {
      const x = await summary();
      return podOf(x, 'burn')?.containers[0]?.cpu && podOf(x, 'idle')?.containers[0]?.cpu ? x : undefined;
    }, 30_000);
    assert.equal(s.node.nodeName, 'stats-e2e');
    assert.ok(Date.parse(s.node.startTime) < Date.now());
    assert.ok((s.node.cpu?.usageCoreNanoSeconds ?? 0) > 0, 'node CPU');
    assert.ok((s.node.memory?.workingSetBytes ?? 0) > 0 && (s.node.memory?.availableBytes ?? -1) >= 0, 'node memory');
    assert.ok((s.node.fs?.capacityBytes ?? 0) > (s.node.fs?.availableBytes ?? Infinity), 'node filesystem');
    assert.ok((s.node.runtime?.imageFs?.usedBytes ?? 0) > 0, 'the image filesystem holds busybox');
    assert.ok((s.node.rlimit?.maxpid ?? 0) > (s.node.rlimit?.curproc ?? Infinity));
    const burn = podOf(s, 'burn');
    assert.ok(burn, JSON.stringify(s.pods.map((p) => p.podRef)));
    assert.equal(burn.podRef.uid.length > 0, true);
    assert.deepEqual(burn.containers.map((c) => c.name), ['main']);
    const main = burn.containers[0];
    assert.ok(Date.parse(main?.startTime ?? '') >= Date.parse(burn.startTime));
    assert.ok((main?.memory?.workingSetBytes ?? 0) > 0, 'container memory');
    assert.ok(main?.rootfs?.capacityBytes !== undefined, 'rootfs bounded by the image filesystem');
    assert.ok((burn.memory?.workingSetBytes ?? 0) > 0 && burn['ephemeral-storage'] !== undefined);
  });

  it('shows the CPU a container burns, and not an idle one\'s', async () => {
    const before = await summary();
    await new Promise((r) => setTimeout(r, 3000));
    const after = await summary();
    const delta = (name: string) => (podOf(after, name)?.containers[0]?.cpu?.usageCoreNanoSeconds ?? 0) - (podOf(before, name)?.containers[0]?.cpu?.usageCoreNanoSeconds ?? 0);
    const burnCores = podOf(after, 'burn')?.containers[0]?.cpu?.usageNanoCores ?? 0;
    const idleCores = podOf(after, 'idle')?.containers[0]?.cpu?.usageNanoCores ?? 0;
    // Two cores shared by many: a busy loop gets well over a tenth of one over 3 s; sleep gets next to nothing.
    assert.ok(delta('burn') > 0.3e9, `burn used ${delta('burn')} ns of CPU in 3 s`);
    assert.ok(delta('idle') < 0.05e9, `idle used ${delta('idle')} ns of CPU in 3 s`);
    assert.ok(burnCores > 100_000_000 && burnCores > 10 * idleCores, `usageNanoCores burn ${burnCores}, idle ${idleCores}`);
    assert.ok((podOf(after, 'burn')?.cpu?.usageNanoCores ?? 0) > 100_000_000, 'the pod\'s CPU follows its container\'s');
  });

  it('shows each volume of a pod, what was written into it, and the disk-backed ones in its ephemeral storage', async () => {
    const MI = 1024 * 1024;
    stack.writeManifest('vols', `apiVersion: v1
kind: Pod
metadata:
  name: vols
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${IMAGE}
      command: ["sh", "-c", "dd if=/dev/zero of=/cache/blob bs=1024 count=2048 && dd if=/dev/zero of=/mem/blob bs=1024 count=512 && touch /cache/ready && sleep 3600"]
      volumeMounts:
        - { name: cache, mountPath: /cache }
        - { name: mem, mountPath: /mem }
  volumes:
    - name: cache
      emptyDir: {}
    - name: mem
      emptyDir: { medium: Memory, sizeLimit: 8Mi }
`);
    await stack.waitForPod('vols', 'Running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('vols'))?.metadata?.uid ?? '';
    // The first walk happens at the first request that asks for the pod: ask once the files are written.
    await stack.waitFor('the blobs written', () => (existsSync(join(stack.dir, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'cache', 'ready')) ? true : undefined));
    const s = await stack.waitFor('vols with its volumes in /stats/summary', async () => {
      const p = podOf(await summary(), 'vols');
      return (p?.volume?.find((v) => v.name === 'cache')?.usedBytes ?? 0) >= 2 * MI ? p : undefined;
    }, 60_000);
    const cache = s.volume?.find((v) => v.name === 'cache');
    const mem = s.volume?.find((v) => v.name === 'mem');
    assert.ok(cache && mem, JSON.stringify(s.volume));
    assert.ok((cache.inodesUsed ?? 0) >= 3, `cache inodes ${cache.inodesUsed}`);
    assert.ok((cache.capacityBytes ?? 0) > (cache.availableBytes ?? Infinity), 'cache: bounded by the node filesystem');
    assert.ok((mem.usedBytes ?? 0) >= MI / 2 && (mem.usedBytes ?? 0) < 2 * MI, `mem used ${mem.usedBytes}`);
    assert.equal(mem.capacityBytes, 8 * MI, 'the memory-backed volume is bounded by its tmpfs (sizeLimit)');
    const eph = s['ephemeral-storage']?.usedBytes ?? 0;
    const rootfs = s.containers[0]?.rootfs?.usedBytes ?? 0;
    assert.ok(eph >= (cache.usedBytes ?? 0), `ephemeral-storage ${eph} counts the disk emptyDir's ${cache.usedBytes}`);
    assert.ok(eph < (cache.usedBytes ?? 0) + rootfs + MI / 2, `ephemeral-storage ${eph}: not the memory-backed volume's ${mem.usedBytes}`);
    stack.removeManifest('vols');
  });

  it('/metrics/resource has the kubelet\'s series for the pod', async () => {
    const res = await fetch(`${stack.api}/metrics/resource`);
    assert.equal(res.status, 200);
    const text = await res.text();
    const labels = `container="main",pod="${stack.podName('burn')}",namespace="default"`;
    for (const re of [
      new RegExp(`^container_cpu_usage_seconds_total\\{${labels}\\} [0-9.e+-]+ \\d+$`, 'm'),
      new RegExp(`^container_memory_working_set_bytes\\{${labels}\\} \\d+ \\d+$`, 'm'),
      new RegExp(`^container_start_time_seconds\\{${labels}\\} [0-9.]+ \\d+$`, 'm'),
      new RegExp(`^pod_cpu_usage_seconds_total\\{pod="${stack.podName('burn')}",namespace="default"\\} [0-9.e+-]+ \\d+$`, 'm'),
      new RegExp(`^pod_memory_working_set_bytes\\{pod="${stack.podName('burn')}",namespace="default"\\} \\d+ \\d+$`, 'm'),
      /^node_cpu_usage_seconds_total [0-9.e+-]+ \d+$/m,
      /^node_memory_working_set_bytes \d+ \d+$/m,
      /^resource_scrape_error 0$/m,
    ])
      assert.match(text, re);
  });
});
