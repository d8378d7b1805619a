/**
 * The OOM watcher on the real kernel log (issue 14): the status manager
 * reads /dev/kmsg and records a Warning `SystemOOM` event on the Node for a
 * system OOM kill, worded as upstream's ("System OOM encountered, victim
 * process: <name>, pid: <pid>"); a container killed over its own memory
 * limit is a cgroup's OOM: OOMKilled in its status and no SystemOOM, as
 * upstream, and (beyond upstream, as the issue asks) one Warning OOMKilled
 * event on its pod. No test may run this machine out of memory, so the system OOM
 * is the kernel's three lines written into its log (/dev/kmsg takes
 * writes from root), with a victim name no real process has.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { EventMessage } from '@app/contracts';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the OOM watcher on the real kernel log', { timeout: 240_000 }, () => {
  const stack = new NodeStack({ node: 'oom-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'] });
  const systemOOMs = (): EventMessage[] => stack.events.filter((e) => e.involvedObject.kind === 'Node' && e.reason === 'SystemOOM');

  before(() => stack.start());
  after(() => stack.stop());

  it('a container over its memory limit is OOMKilled, with a Warning OOMKilled event on its pod, and records no SystemOOM (a cgroup\'s OOM, not the system\'s)', async () => {
    stack.writeManifest('hog', `apiVersion: v1
kind: Pod
metadata:
  name: hog
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  containers:
    - name: hog
      image: ${IMAGE}
      command: ["sh", "-c", "head -c 64m /dev/zero | tail"]
      resources:
        limits: { memory: 16Mi }
`);
    const s = await stack.waitForPod('hog', 'terminated', (x) => x.containerStatuses?.[0]?.state?.terminated !== undefined, 60_000);
    assert.equal(s.containerStatuses?.[0]?.state?.terminated?.reason, 'OOMKilled');
    // The pod's event is the status manager's, sent when it takes the status in: it arrives on its own, after the status.
    const oomEvents = () => stack.events.filter((e) => e.involvedObject.kind === 'Pod' && e.involvedObject.name === 'hog-oom-e2e' && e.reason === 'OOMKilled');
    await stack.waitFor('the OOMKilled event on the pod', () => (oomEvents().length > 0 ? true : undefined), 15_000);
    await sleep(2500); // the watcher reads the kernel log every second
    assert.deepEqual(systemOOMs(), []);
    const podEvents = oomEvents();
    assert.equal(podEvents.length, 1, `OOMKilled events on the pod: ${JSON.stringify(stack.events.map((e) => `${e.involvedObject.name} ${e.reason}`))}`);
    assert.equal(podEvents[0]?.eventType, 'Warning');
    assert.equal(podEvents[0]?.involvedObject.fieldPath, 'spec.containers{hog}');
    assert.match(podEvents[0]?.message ?? '', /^Container hog was killed: it ran out of memory \(OOMKilled, exit code 137\)$/);
    stack.removeManifest('hog');
  });

  it('a system OOM kill in the kernel log is a Warning SystemOOM event on the Node', async (t) => {
    const pid = 900_000 + Math.floor(Math.random() * 90_000);
    const name = 'ks-e2e-fake-oom';
    const t0 = Date.now();
    // Each write to /dev/kmsg is one record, as each of the kernel's own lines is.
    for (const line of [
      `${name} invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0`,
      `oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=${name},pid=${pid},uid=0`,
      `Out of memory: Killed process ${pid} (${name}) total-vm:1049000kB, anon-rss:1040000kB, file-rss:4kB, shmem-rss:0kB, UID:0 pgtables:2100kB oom_score_adj:0`,
    ])
      writeFileSync('/dev/kmsg', `${line}\n`); // a record is complete, readable, at its newline
    const e = await stack.waitFor('a SystemOOM event on the Node', () => systemOOMs().find((x) => x.message.includes(String(pid))), 15_000);
    t.diagnostic(`SystemOOM ${Date.now() - t0}ms after the kernel logged it`);
    assert.equal(e.eventType, 'Warning');
    assert.equal(e.involvedObject.name, 'oom-e2e');
    assert.equal(e.message, `System OOM encountered, victim process: ${name}, pid: ${pid}`);
    assert.equal(systemOOMs().length, 1, 'one event for one OOM');
  });
});
