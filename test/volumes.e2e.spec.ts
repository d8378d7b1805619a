/**
 * Volumes that need no apiserver, end to end on the real containerd:
 * emptyDir shared by an init and a main container, a memory-backed emptyDir
 * that is a tmpfs of its sizeLimit, downwardAPI files, hostPath with its type
 * checked (a mismatch is a FailedMount and no container starts), and the
 * pod's directory and tmpfs gone once the pod is deleted.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1PodStatus } from '@kubernetes/client-node';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const mountPoints = () => readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '');
const mainRunning = (s: V1PodStatus) => s.containerStatuses?.find((c) => c.name === 'main')?.state?.running !== undefined;

describe('volumes on the real containerd', { timeout: 300_000 }, () => {
  const stack = new NodeStack({
    node: 'vol-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    env: { 'pod-worker': { SYNC_FREQUENCY: '10s', POD_SYNC_BACKOFF: '2s' } },
  });
  const out = () => join(stack.dir, 'out');
  const podRoot = () => join(stack.dir, 'pods');
  let uid = '';

  before(() => stack.start());
  after(() => stack.stop());

  it('an init container writes into an emptyDir the main container reads; a memory emptyDir is a tmpfs of its sizeLimit; downwardAPI shows the name and labels', async () => {
    const main = 'cat /work/msg > /out/msg; grep " /mem " /proc/mounts > /out/mounts; cat /podinfo/name > /out/name; cat /podinfo/labels > /out/labels; sleep 3600';
    stack.writeManifest(
      'vols',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: vols\n  labels: { app: vols, tier: test }\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n` +
        `  initContainers:\n    - name: writer\n      image: ${IMAGE}\n      command: ["sh", "-c", "echo from-init > /work/msg"]\n      volumeMounts: [{ name: work, mountPath: /work }]\n` +
        `  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(main)}]\n` +
        `      volumeMounts: [{ name: work, mountPath: /work }, { name: mem, mountPath: /mem }, { name: podinfo, mountPath: /podinfo }, { name: out, mountPath: /out }]\n` +
        `  volumes:\n    - { name: work, emptyDir: {} }\n    - { name: mem, emptyDir: { medium: Memory, sizeLimit: 16Mi } }\n` +
        `    - name: podinfo\n      downwardAPI:\n        items:\n          - { path: name, fieldRef: { fieldPath: metadata.name } }\n          - { path: labels, fieldRef: { fieldPath: metadata.labels } }\n` +
        `    - { name: out, hostPath: { path: ${out()}, type: DirectoryOrCreate } }\n`,
    );
    await stack.waitForPod('vols', 'Running', (s) => s.phase === 'Running' && mainRunning(s), 60_000);
    await stack.waitFor('the main container\'s output', () => (existsSync(join(out(), 'labels')) && readFileSync(join(out(), 'labels'), 'utf8') ? true : undefined));
    assert.equal(readFileSync(join(out(), 'msg'), 'utf8'), 'from-init\n', 'the main container read what the init container wrote');
    const mounts = readFileSync(join(out(), 'mounts'), 'utf8');
    assert.match(mounts, /^tmpfs \/mem tmpfs .*size=16384k/, `/mem in the container's /proc/mounts: ${mounts}`);
    assert.equal(readFileSync(join(out(), 'name'), 'utf8'), stack.podName('vols'));
    assert.equal(readFileSync(join(out(), 'labels'), 'utf8'), 'app="vols"\ntier="test"');
    uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('vols'))?.metadata?.uid ?? '';
    assert.ok(uid);
    assert.ok(mountPoints().includes(join(podRoot(), uid, 'volumes', 'kubernetes.io~empty-dir', 'mem')), 'the tmpfs is in the host\'s mount table');
  });

  it('a hostPath whose type does not match is a FailedMount: no container starts, the other pod runs on', async () => {
    const file = join(stack.dir, '.keep');
    stack.writeManifest(
      'badhost',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: badhost\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n` +
        `  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n      volumeMounts: [{ name: h, mountPath: /h }, { name: cm, mountPath: /cm }]\n` +
        `  volumes:\n    - { name: h, hostPath: { path: ${file}, type: Directory } }\n    - { name: cm, configMap: { name: settings } }\n`,
    );
    const message = `MountVolume.SetUp failed for volume "h" : hostPath type check failed: ${file} is not a directory`;
    // Both volumes' events (one message each, sent one after the other): the assertions below read both.
    const cmEvent = () => stack.eventsOf('badhost').find((e) => e.reason === 'FailedMount' && e.message.includes('"cm"'));
    await stack.waitFor('the FailedMount events', () => (stack.eventsOf('badhost').some((e) => e.reason === 'FailedMount' && e.message === message) && cmEvent() ? true : undefined));
    const cm = cmEvent();
    assert.match(cm?.message ?? '', /this node has not joined a cluster \(config-source has no KUBECONFIG\): configmap "settings" cannot be read/);
    assert.equal(stack.eventsOf('badhost').find((e) => e.reason === 'FailedMount')?.eventType, 'Warning');
    await new Promise((r) => setTimeout(r, 5000)); // a few syncs (POD_SYNC_BACKOFF 2s): retried, still refused
    const s = await stack.waitForPod('badhost', 'waiting ContainerCreating', (x) => x.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating');
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(await stack.containers('badhost'), [], 'no container was created');
    // The retry's event comes at the next sync, a jittered back-off (2 to 3 s) after the first: wait for it rather
    // than count on the sleep above holding one on a loaded machine.
    const retries = () => stack.eventsOf('badhost').filter((e) => e.message === message).length;
    await stack.waitFor('the mount retried at a later sync', () => (retries() >= 2 ? true : undefined), 30_000);
    assert.ok(retries() >= 2, 'the mount was retried at later syncs');
    const vols = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('vols'));
    assert.ok(vols?.status && mainRunning(vols.status), 'the other pod runs on');
  });

  it('after deletion the pod\'s directory and its tmpfs are gone', async () => {
    stack.removeManifest('vols');
    const dir = join(podRoot(), uid);
    await stack.waitFor('the pod directory to be removed', () => (!existsSync(dir) ? true : undefined), 60_000);
    assert.deepEqual(mountPoints().filter((m) => m.startsWith(`${dir}/`)), []);
    assert.ok(existsSync(join(out(), 'msg')), 'the hostPath\'s contents stay on the host');
  });
});
