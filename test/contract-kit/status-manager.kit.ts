/**
 * The status manager's contract, checked from outside (pkg/kubelet/status):
 * the kit plays the pod worker and the prober. For a pod in the podManager
 * (`pods` `<node>.pod.<uid>`, as the sync loop keeps it) it
 *  - stores each SetPodStatus of `kubelet.<node>.status.SetPodStatus.<uid>`
 *    in `pod-status` (`<node>.<uid>`), its version going up with each
 *    change;
 *  - lays the prober's readiness results (probe_result on
 *    `kubelet.<node>.probe.readiness.<uid>`) on the container's `ready`;
 *  - stores TerminatePod as the pod's finished status;
 *  - holds `<node>.leader.status-manager`, keeps working after bad input,
 *    and keeps every status and its version across its own restart.
 */
import { randomUUID } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import { MessageTypes, Subjects, type Pod, type PodStatus, type StatusVerb, type VersionedPodStatusRecord } from '@app/contracts';
import { kvKey } from '@app/nats';
import { KitFailure, desirePod, expectWithin, leaderLeaseCheck, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const enc = new TextEncoder();
const dec = new TextDecoder();

class KitPodStatus {
  readonly uid = randomUUID();
  readonly pod: Pod;
  readonly containerId = randomUUID().replace(/-/g, '');
  constructor(private readonly t: KitTarget) {
    this.pod = { metadata: { uid: this.uid, name: `kit-status-${this.uid.slice(0, 8)}`, namespace: 'contract-kit' }, spec: { containers: [{ name: 'main', image: IMAGE }] } };
  }
  desire(desired: boolean): Promise<void> {
    return desirePod(this.t, this.pod, desired);
  }
  status(running: boolean, message?: string): PodStatus {
    const startedAt = new Date(Date.now() - 5000).toISOString();
    return {
      phase: running ? 'Running' : 'Succeeded',
      ...(message ? { message } : {}),
      conditions: [{ type: 'Ready', status: 'False' }, { type: 'ContainersReady', status: 'False' }, { type: 'Initialized', status: 'True' }, { type: 'PodScheduled', status: 'True' }],
      containerStatuses: [
        {
          name: 'main',
          containerID: `containerd://${this.containerId}`,
          image: IMAGE,
          imageID: '',
          ready: false,
          restartCount: 0,
          started: running,
          state: running ? { running: { startedAt } } : { terminated: { exitCode: 0, reason: 'Completed', startedAt, finishedAt: new Date().toISOString() } },
        },
      ],
    };
  }
  send(verb: StatusVerb, status: PodStatus): void {
    this.t.nc.publish(Subjects.status.build(this.t.node, verb, this.uid), enc.encode(JSON.stringify({ type: MessageTypes.statusCommand, podUid: this.uid, args: { status, podName: this.pod.metadata.name, podNamespace: this.pod.metadata.namespace } })));
  }
}

async function stored(kv: KV, node: string, uid: string): Promise<VersionedPodStatusRecord | undefined> {
  const e = await kv.get(kvKey(node, uid));
  return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(dec.decode(e.value)) as VersionedPodStatusRecord) : undefined;
}

async function expectStored(t: KitTarget, kv: KV, p: KitPodStatus, what: string, ok: (r: VersionedPodStatusRecord) => boolean): Promise<VersionedPodStatusRecord> {
  let last: VersionedPodStatusRecord | undefined;
  return expectWithin(`pod-status ${kvKey(t.node, p.uid)} ${what}`, async () => {
    last = await stored(kv, t.node, p.uid);
    return last && ok(last) ? last : undefined;
  }, t.timeoutMs, () => (last ? `version ${last.version}, phase ${last.status.phase ?? '?'}, ready ${String(last.status.containerStatuses?.[0]?.ready)}, message ${JSON.stringify(last.status.message ?? null)}, finished ${String(last.podIsFinished ?? false)}` : 'no record'));
}

async function withPod(t: KitTarget, fn: (p: KitPodStatus, kv: KV) => Promise<void>): Promise<void> {
  const p = new KitPodStatus(t);
  await p.desire(true);
  try {
    await fn(p, await new Kvm(t.nc).open('pod-status'));
  } finally {
    p.send('TerminatePod', p.status(false));
    await p.desire(false).catch(() => undefined);
  }
}

export const STATUS_MANAGER_CHECKS: readonly KitCheck[] = [
  leaderLeaseCheck('status-manager'),
  {
    name: 'SetPodStatus: stored in pod-status, and a change stored under a higher version',
    async run(t, note) {
      await withPod(t, async (p, kv) => {
        p.send('SetPodStatus', p.status(true, 'first'));
        const first = await expectStored(t, kv, p, 'with phase Running and message "first"', (r) => r.status.phase === 'Running' && r.status.message === 'first' && r.podName === p.pod.metadata.name);
        p.send('SetPodStatus', p.status(true, 'second'));
        const second = await expectStored(t, kv, p, `with message "second" at a version above ${first.version}`, (r) => r.status.message === 'second' && r.version > first.version);
        note(`version ${first.version} -> ${second.version}`);
      });
    },
  },
  {
    name: 'a readiness probe_result Success: the container stored ready',
    async run(t, note) {
      await withPod(t, async (p, kv) => {
        p.send('SetPodStatus', p.status(true));
        await expectStored(t, kv, p, 'with phase Running', (r) => r.status.phase === 'Running');
        t.nc.publish(Subjects.probeResult.build(t.node, 'readiness', p.uid), enc.encode(JSON.stringify({ type: MessageTypes.probeResult, probeType: 'readiness', podUid: p.uid, containerId: p.containerId, containerName: 'main', result: 'Success' })));
        const r = await expectStored(t, kv, p, 'with container main ready', (x) => x.status.containerStatuses?.find((c) => c.name === 'main')?.ready === true);
        note(`ready at version ${r.version}; conditions ${(r.status.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(' ')}`);
      });
    },
  },
  {
    name: 'TerminatePod: the finished status stored',
    async run(t, note) {
      await withPod(t, async (p, kv) => {
        p.send('SetPodStatus', p.status(true));
        await expectStored(t, kv, p, 'with phase Running', (r) => r.status.phase === 'Running');
        p.send('TerminatePod', p.status(false));
        const r = await expectStored(t, kv, p, 'finished (podIsFinished) with container main terminated', (x) => x.podIsFinished === true && x.status.containerStatuses?.some((c) => c.name === 'main' && c.state?.terminated) === true);
        note(`finished at version ${r.version}, phase ${r.status.phase ?? ''}`);
      });
    },
  },
  {
    name: 'bad input (not JSON, wrong types, missing fields) on its subjects: ignored, and it goes on storing',
    async run(t, note) {
      const junk = ['{not json', JSON.stringify({ type: 'kubelet.v9.unknown' }), JSON.stringify({ type: MessageTypes.statusCommand, podUid: 42, args: [] }), JSON.stringify({ type: MessageTypes.statusCommand, podUid: randomUUID(), args: { status: 'Running' } })];
      for (const j of junk) {
        t.nc.publish(Subjects.status.build(t.node, 'SetPodStatus', randomUUID()), enc.encode(j));
        t.nc.publish(Subjects.probeResult.build(t.node, 'readiness', randomUUID()), enc.encode(j));
      }
      await t.nc.flush();
      await withPod(t, async (p, kv) => {
        p.send('SetPodStatus', p.status(true, 'after junk'));
        const r = await expectStored(t, kv, p, 'with message "after junk"', (x) => x.status.message === 'after junk');
        note(`after ${junk.length * 2} bad messages: stored at version ${r.version}`);
      });
    },
  },
  {
    name: 'restarted: the stored status kept, and the next change stored above its version',
    needsRestart: true,
    async run(t, note) {
      await withPod(t, async (p, kv) => {
        p.send('SetPodStatus', p.status(true, 'before'));
        const before = await expectStored(t, kv, p, 'with message "before"', (r) => r.status.message === 'before');
        await t.restart?.();
        const kept = await stored(kv, t.node, p.uid);
        if (kept?.status.message !== 'before') throw new KitFailure(`after the restart the stored status is ${JSON.stringify(kept?.status.message ?? null)}, not "before"`);
        // Sent again until stored: a just-restarted status manager may not be subscribed yet, as a pod worker's next sync would send it again.
        const after = await expectWithin('"after" stored above the version before the restart', async () => {
          p.send('SetPodStatus', p.status(true, 'after'));
          await new Promise((r) => setTimeout(r, 500));
          const r = await stored(kv, t.node, p.uid);
          return r && r.status.message === 'after' && r.version > before.version ? r : undefined;
        }, t.timeoutMs);
        note(`version ${before.version} before, ${after.version} after`);
      });
    },
  },
];
