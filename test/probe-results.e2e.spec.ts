/**
 * Probe results are level-triggered (the prober's `probe-results` bucket)
 * on the real stack: a pod with a readiness probe stays Ready in GET /pods,
 * polled every 150 ms, while the pod-worker, the status manager, and the
 * prober then the pod-worker are SIGKILLed and started again; a prober
 * restarted alone probes at once (a failing probe shows in /pods within
 * seconds, not at the pod's next sync); and a
 * readiness change whose messages were lost (the status manager was down
 * when the prober and the pod worker sent them) is in /pods as soon as the
 * status manager is back, not at the pod's next periodic sync (a minute).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kvm, type KV } from '@nats-io/kv';
import type { V1PodStatus } from '@kubernetes/client-node';
import type { ProbeResultRecord } from '@app/contracts';
import { exited } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const NODE = 'prl-e2e';
const POLL_MS = 150;
const readyOf = (s: V1PodStatus | undefined) => s?.conditions?.find((c) => c.type === 'Ready')?.status;

/** One look at GET /pods: the pod's Ready condition, or why there was none. */
interface Sample {
  at: number;
  ready?: string;
  error?: string;
}

describe('probe results across restarts on the real stack', { timeout: 300_000 }, () => {
  // The default sync frequency (a minute): nothing but the bucket repairs a lost message sooner.
  const stack = new NodeStack({ node: NODE, services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'prober', 'pod-worker', 'config-source'] });
  const data = () => join(stack.dir, 'data');
  const pod = () => stack.podName('web');
  let uid = '';
  let results: KV;
  let instance = 0;

  /** Polls GET /pods every POLL_MS until stopped; the samples, in order. */
  function watchReady(): { samples: Sample[]; stop: () => Promise<Sample[]> } {
    const samples: Sample[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        const at = Date.now();
        try {
          const item = (await stack.podList()).items.find((p) => p.metadata?.name === pod());
          samples.push(item ? { at, ...(readyOf(item.status) !== undefined ? { ready: readyOf(item.status) } : {}) } : { at, error: 'pod not listed' });
        } catch (err) {
          samples.push({ at, error: (err as Error).message });
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    })();
    return {
      samples,
      stop: async () => {
        running = false;
        await loop;
        return samples;
      },
    };
  }

  /** SIGKILLs the service's running process and starts a new one; resolves once the new one is ready. */
  async function killAndRestart(service: 'pod-worker' | 'status-manager' | 'prober'): Promise<{ killedAt: number; readyAt: number }> {
    const [key, sp] = [...stack.procs.entries()].find(([k]) => k.startsWith(`${service}#`)) ?? [];
    assert.ok(key && sp, `${service} runs`);
    const killedAt = Date.now();
    sp.process.kill('SIGKILL');
    await exited(sp.process);
    stack.procs.delete(key);
    await stack.startService(service, String(++instance));
    return { killedAt, readyAt: Date.now() };
  }

  /** The SetPodStatus calls the pod workers sent for the pod since `since` (the test hears them on NATS, the status manager up or not). */
  const sentSince = (since: number) => stack.history.slice(since).filter((h) => h.pod === pod() && h.verb === 'SetPodStatus');

  const readinessRecord = async (): Promise<ProbeResultRecord | undefined> => {
    const e = await results.get(`${NODE}.${uid}.main.readiness`);
    return e && e.operation === 'PUT' ? (e.json<ProbeResultRecord>()) : undefined;
  };

  const describeSamples = (samples: Sample[]) => samples.map((s) => `${s.at % 100_000}:${s.ready ?? s.error ?? '?'}`).join(' ');

  before(async () => {
    await stack.start();
    mkdirSync(data(), { recursive: true });
    writeFileSync(join(data(), 'ready'), 'yes\n');
    results = await new Kvm(stack.nc).open('probe-results');
    stack.writeManifest(
      'web',
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n      readinessProbe:\n        exec:\n          command: ["test", "-f", "/data/ready"]\n        periodSeconds: 1\n      volumeMounts:\n        - { name: data, mountPath: /data }\n  volumes:\n    - name: data\n      hostPath:\n        path: ${data()}\n`,
    );
    await stack.waitForPod('web', 'Ready', (s) => readyOf(s) === 'True', 60_000);
    uid = (await stack.podList()).items.find((p) => p.metadata?.name === pod())?.metadata?.uid ?? '';
    assert.ok(uid);
  });
  after(() => stack.stop());

  it('the prober keeps the readiness result in the probe-results bucket, for the running container', async () => {
    const r = await readinessRecord();
    const [container] = (await stack.containers('web')).filter((c) => c.state === 'CONTAINER_RUNNING');
    assert.equal(r?.result, 'Success');
    assert.equal(r?.containerId, container?.id);
  });

  it('a pod-worker SIGKILLed and started again: the pod stays Ready in /pods throughout, and every status the new one sends says ready', async () => {
    const watch = watchReady();
    const before = stack.history.length;
    const { killedAt } = await killAndRestart('pod-worker');
    // The new replica takes the shard once the dead one's lease runs out, and resyncs the pod.
    await stack.waitFor('a status from the new pod-worker', () => (sentSince(before).length > 0 ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 3000));
    // The looks counted below are as many as the machine answered in that time: wait for them rather than assume them.
    await stack.waitFor('20 looks at /pods since the kill', () => (watch.samples.filter((s) => s.at > killedAt).length >= 20 ? true : undefined), 30_000);
    const samples = await watch.stop();
    const sent = sentSince(before);
    assert.ok(samples.filter((s) => s.at > killedAt).length >= 20, `polled ${samples.length} times`);
    assert.deepEqual(samples.filter((s) => s.ready !== 'True'), [], describeSamples(samples));
    assert.deepEqual(sent.map((h) => h.status.containerStatuses?.[0]?.ready), sent.map(() => true), 'the new pod worker generated the status from the bucket');
  });

  it('the status manager SIGKILLed and started again: the pod is Ready in every /pods answer', async () => {
    const watch = watchReady();
    const { readyAt } = await killAndRestart('status-manager');
    await new Promise((r) => setTimeout(r, 3000));
    // Ten answers of the new status manager, counted below: a loaded machine may give fewer in the 3 s, so wait for them.
    await stack.waitFor('ten answers of the new status manager', () => (watch.samples.filter((s) => s.error === undefined && s.at > readyAt).length >= 10 ? true : undefined), 30_000);
    const samples = await watch.stop();
    const answered = samples.filter((s) => s.error === undefined);
    assert.ok(answered.filter((s) => s.at > readyAt).length >= 10, describeSamples(samples));
    assert.deepEqual(answered.filter((s) => s.ready !== 'True'), [], describeSamples(samples));
  });

  it('the prober SIGKILLed and started again, then the pod-worker: the new prober resumes from the kept result, the pod stays Ready', async () => {
    const watch = watchReady();
    await killAndRestart('prober');
    const before = stack.history.length;
    // The next sync (the new pod-worker's resync) adds the pod to the new prober.
    await killAndRestart('pod-worker');
    await stack.waitFor('a status from the new pod-worker', () => (sentSince(before).length > 0 ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 3000)); // its first probes ran
    const samples = await watch.stop();
    assert.deepEqual(samples.filter((s) => s.ready !== 'True'), [], describeSamples(samples));
    assert.equal((await readinessRecord())?.result, 'Success');
  });

  // Runs right after a pod-worker restart resynced the pod: its next periodic sync (and AddPod) is a minute away.
  it('the prober SIGKILLed and started again alone: it probes at once, so a readiness failure is in /pods within seconds, not at the pod\'s next sync', async () => {
    const watch = watchReady();
    const { readyAt } = await killAndRestart('prober');
    const removedAt = Date.now();
    rmSync(join(data(), 'ready'));
    try {
      // Period 1 s, failureThreshold 3: about 3 s of probing, then the sync it causes.
      await stack.waitForPod('web', 'NotReady after the prober restart', (s) => readyOf(s) === 'False', 15_000);
      const samples = await watch.stop();
      assert.deepEqual(samples.filter((s) => s.at < readyAt && s.ready !== 'True'), [], `Ready until the new prober: ${describeSamples(samples)}`);
      console.log(`# NotReady in /pods ${Date.now() - removedAt} ms after the probe started failing (the prober restarted ${removedAt - readyAt} ms before)`);
    } finally {
      await watch.stop();
      writeFileSync(join(data(), 'ready'), 'yes\n');
    }
    await stack.waitForPod('web', 'Ready again', (s) => readyOf(s) === 'True', 15_000);
  });

  it('readiness lost while the status manager was down: /pods says NotReady as soon as it is back, and Ready again once the probe passes', async () => {
    const [key, sp] = [...stack.procs.entries()].find(([k]) => k.startsWith('status-manager#')) ?? [];
    assert.ok(key && sp);
    sp.process.kill('SIGKILL');
    await exited(sp.process);
    stack.procs.delete(key);
    const before = stack.history.length;
    rmSync(join(data(), 'ready'));
    // The prober saves the failure and says so; the pod worker syncs and says so: nobody listens.
    await stack.waitFor('the failure in the probe-results bucket', async () => ((await readinessRecord())?.result === 'Failure' ? true : undefined), 15_000);
    await stack.waitFor('the pod worker\'s status saying not ready, unheard', () => (sentSince(before).some((h) => h.status.containerStatuses?.[0]?.ready === false) ? true : undefined), 15_000);
    await stack.startService('status-manager', String(++instance));
    const first = (await stack.podList()).items.find((p) => p.metadata?.name === pod());
    assert.equal(readyOf(first?.status), 'False', 'the first answer of the new status manager');
    assert.equal(first?.status?.containerStatuses?.[0]?.ready, false);
    writeFileSync(join(data(), 'ready'), 'yes\n');
    await stack.waitForPod('web', 'Ready again', (s) => readyOf(s) === 'True', 15_000);
  });
});
