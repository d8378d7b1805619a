/**
 * The kubelet server's read side, checked from outside (server.go's
 * /pods, /containerLogs, /healthz on the read port): it serves what the
 * node's records say, joined as the kubelet does:
 *  - `GET /pods`: every pod of `pods` (`<node>.pod.<uid>`) with its stored
 *    status (`pod-status` `<node>.<uid>`), the prober's readiness results
 *    (`probe-results`) laid on its containers; a pod gone from `pods` gone
 *    from it;
 *  - `GET /containerLogs/<ns>/<pod>/<container>`: the container's log, from
 *    the runtime's ContainerStatus log path;
 *  - a record it cannot read is skipped, and the others still served.
 * The kit writes the records as the sync loop, the status manager and the
 * prober would, and runs the container through the CRI. Needs the read
 * port (--read-url).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { Kvm } from '@nats-io/kv';
import type { V1PodList } from '@kubernetes/client-node';
import { probeResultKey, type Pod } from '@app/contracts';
import { KubeletLabels } from '@app/kube';
import { kvKey } from '@app/nats';
import { KIT_NAMESPACE, KitFailure, desirePod, expectWithin, kitSandboxConfig, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';

function readUrl(t: KitTarget): string {
  if (!t.readUrl) throw new KitFailure('the kubelet server\'s suite needs its read port (--read-url http://127.0.0.1:10315)');
  return t.readUrl;
}

/** A pod as the records hold it: desired, its status stored, maybe a readiness result. */
class RecordedPod {
  readonly uid = randomUUID();
  readonly name = `kit-read-${this.uid.slice(0, 8)}`;
  readonly containerId = randomUUID().replace(/-/g, '');
  readonly pod: Pod;
  constructor(private readonly t: KitTarget) {
    this.pod = { metadata: { uid: this.uid, name: this.name, namespace: 'contract-kit' }, spec: { containers: [{ name: 'main', image: IMAGE }] } };
  }
  async write(ready: boolean | undefined): Promise<void> {
    const kvm = new Kvm(this.t.nc);
    await desirePod(this.t, this.pod, true);
    const status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'main', containerID: `containerd://${this.containerId}`, image: IMAGE, imageID: '', ready: false, restartCount: 4, started: true, state: { running: { startedAt: new Date().toISOString() } } }],
    };
    await (await kvm.open('pod-status')).put(kvKey(this.t.node, this.uid), JSON.stringify({ version: 1, podName: this.name, podNamespace: 'contract-kit', status }));
    if (ready !== undefined) {
      await (await kvm.open('probe-results')).put(kvKey(this.t.node, probeResultKey(this.uid, 'main', 'readiness')), JSON.stringify({ podUid: this.uid, containerName: 'main', probeType: 'readiness', containerId: this.containerId, result: ready ? 'Success' : 'Failure', time: Date.now() }));
    }
  }
  async remove(): Promise<void> {
    const kvm = new Kvm(this.t.nc);
    await desirePod(this.t, this.pod, false).catch(() => undefined);
    await (await kvm.open('pod-status')).delete(kvKey(this.t.node, this.uid)).catch(() => undefined);
    await (await kvm.open('probe-results')).delete(kvKey(this.t.node, probeResultKey(this.uid, 'main', 'readiness'))).catch(() => undefined);
  }
}

async function served(t: KitTarget, name: string): Promise<V1PodList['items'][number] | undefined> {
  const res = await fetch(`${readUrl(t)}/pods`);
  if (res.status !== 200) throw new KitFailure(`GET /pods answered ${res.status}`);
  return ((await res.json()) as V1PodList).items.find((p) => p.metadata?.name === name);
}

async function withRecordedPod(t: KitTarget, ready: boolean | undefined, fn: (p: RecordedPod) => Promise<void>): Promise<void> {
  const p = new RecordedPod(t);
  await p.write(ready);
  try {
    await fn(p);
  } finally {
    await p.remove();
  }
}

export const KUBELET_SERVER_CHECKS: readonly KitCheck[] = [
  {
    name: 'GET /pods: a desired pod with its stored status, the readiness result laid on its container',
    async run(t, note) {
      await withRecordedPod(t, true, async (p) => {
        const pod = await expectWithin(`${p.name} in GET /pods with its stored status (restartCount 4) and container main ready`, async () => {
          const got = await served(t, p.name);
          const c = got?.status?.containerStatuses?.find((x) => x.name === 'main');
          return c?.restartCount === 4 && c.ready ? got : undefined;
        }, t.timeoutMs);
        if (pod?.metadata?.uid !== p.uid || pod.status?.phase !== 'Running') throw new KitFailure(`GET /pods serves ${p.name} as uid ${pod?.metadata?.uid ?? ''} phase ${pod?.status?.phase ?? ''}`);
        note(`served: phase ${pod.status.phase}, conditions ${(pod.status.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(' ')}`);
      });
    },
  },
  {
    name: 'a pod gone from pods is gone from GET /pods',
    async run(t, note) {
      const p = new RecordedPod(t);
      await p.write(undefined);
      await expectWithin(`${p.name} in GET /pods`, () => served(t, p.name), t.timeoutMs);
      await p.remove();
      const started = performance.now();
      await expectWithin(`${p.name} gone from GET /pods`, async () => ((await served(t, p.name)) === undefined ? true : undefined), t.timeoutMs);
      note(`gone ${Math.round(performance.now() - started)} ms after its records were deleted`);
    },
  },
  {
    name: 'GET /containerLogs: a container\'s log, from the runtime\'s log path',
    async run(t, note) {
      const uid = randomUUID();
      const name = `kit-logs-${uid.slice(0, 8)}`;
      const pod: Pod = { metadata: { uid, name, namespace: KIT_NAMESPACE }, spec: { containers: [{ name: 'main', image: IMAGE }] } };
      await desirePod(t, pod, true);
      const config = kitSandboxConfig(t, uid, name);
      mkdirSync(config.logDirectory ?? '', { recursive: true });
      const labels = config.labels ?? {};
      const { podSandboxId } = await t.cri.runtime('RunPodSandbox', { config });
      try {
        const { containerId } = await t.cri.runtime('CreateContainer', {
          podSandboxId,
          config: { metadata: { name: 'main', attempt: 0 }, image: { image: IMAGE }, command: ['sh', '-c', 'echo line one; echo line two; sleep 3600'], labels: { ...labels, [KubeletLabels.containerName]: 'main' }, logPath: 'main/0.log' },
          sandboxConfig: config,
        });
        await t.cri.runtime('StartContainer', { containerId });
        const body = await expectWithin(`GET /containerLogs/contract-kit/${name}/main with both lines`, async () => {
          const res = await fetch(`${readUrl(t)}/containerLogs/contract-kit/${name}/main`);
          const text = await res.text();
          return res.status === 200 && text.includes('line one') && text.includes('line two') ? text : undefined;
        }, t.timeoutMs);
        note(`${body.trim().split('\n').length} line(s) served`);
        await t.cri.runtime('StopContainer', { containerId, timeout: '0' }).catch(() => undefined);
        await t.cri.runtime('RemoveContainer', { containerId }).catch(() => undefined);
      } finally {
        await t.cri.runtime('StopPodSandbox', { podSandboxId }).catch(() => undefined);
        await t.cri.runtime('RemovePodSandbox', { podSandboxId }).catch(() => undefined);
        await desirePod(t, pod, false).catch(() => undefined);
      }
    },
  },
  {
    name: 'a record it cannot read (not JSON, a status of the wrong shape): skipped, the other pods served, /healthz ok',
    async run(t, note) {
      const kvm = new Kvm(t.nc);
      const bad = [randomUUID(), randomUUID()];
      const pods = await kvm.open('pods');
      const statuses = await kvm.open('pod-status');
      await pods.put(kvKey(t.node, 'pod', bad[0] ?? ''), '{not json');
      await statuses.put(kvKey(t.node, bad[1] ?? ''), JSON.stringify({ version: 'x', status: 42 }));
      try {
        await withRecordedPod(t, undefined, async (p) => {
          await expectWithin(`${p.name} in GET /pods beside the bad records`, () => served(t, p.name), t.timeoutMs);
          const health = await fetch(`${readUrl(t)}/healthz`);
          const text = await health.text();
          if (health.status !== 200) throw new KitFailure(`/healthz answered ${health.status}: ${text}`);
          note(`/pods served beside 2 bad records; /healthz ${health.status} ${text.trim()}`);
        });
      } finally {
        await pods.delete(kvKey(t.node, 'pod', bad[0] ?? '')).catch(() => undefined);
        await statuses.delete(kvKey(t.node, bad[1] ?? '')).catch(() => undefined);
      }
    },
  },
  {
    name: 'restarted: it serves the pods again',
    needsRestart: true,
    async run(t, note) {
      await withRecordedPod(t, undefined, async (p) => {
        await expectWithin(`${p.name} in GET /pods`, () => served(t, p.name), t.timeoutMs);
        await t.restart?.();
        await expectWithin(`${p.name} in GET /pods after the restart`, () => served(t, p.name), t.timeoutMs);
        note('served again');
      });
    },
  },
];
