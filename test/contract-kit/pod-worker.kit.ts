/**
 * The pod workers' contract, checked from outside (pod_workers.go
 * UpdatePod, kubelet.go SyncPod / SyncTerminatingPod): the kit plays the
 * sync loop. The replicas hold every shard's lease (`leases`
 * `<node>.pod-worker-shard.<n>`, POD_WORKER_SHARDS shards); for the work
 * dispatched on `kubelet.<node>.work.<shard>.<uid>` (a request) the
 * shard's owner
 *  - answers work_accepted with the shard;
 *  - for SyncPodCreate runs the pod in the runtime through cri-gateway
 *    (its sandbox and containers, labelled with the pod's UID and the
 *    node), keeps the pod's `workers` record (`<node>.<uid>`), sends
 *    SetPodStatus on `kubelet.<node>.status.SetPodStatus.<uid>` with the
 *    container running, and work-done on `kubelet.<node>.work.done.<uid>`;
 *  - for SyncPodKill stops the containers within the grace period, sends a
 *    status with every container terminated, and marks its workers record
 *    finished once the pod is terminated (no work-done after that: the
 *    worker is done, as pod_workers.go's completeTerminated);
 * keeps a running pod's containers across its own restart (a new owner
 * re-derives the shard's pods from the `pods` bucket, which the kit keeps
 * as the sync loop does), and refuses bad input without losing the work
 * after it. Needs the PLEG beside it (the pod cache); no sync loop (the kit
 * is it).
 */
import { randomUUID } from 'node:crypto';
import type { Msg } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { MessageTypes, Subjects, shardOf, type Pod, type PodStatus, type StatusCommandMessage, type SyncPodType, type WorkAcceptedMessage } from '@app/contracts';
import { KubeletLabels } from '@app/kube';
import { kvKey, sharedSettingKey } from '@app/nats';
import { KitFailure, desirePod, expectWithin, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const enc = new TextEncoder();
const dec = new TextDecoder();

async function shardCount(t: KitTarget): Promise<number> {
  const kv = await new Kvm(t.nc).open('leases');
  const e = await kv.get(sharedSettingKey(t.node, 'POD_WORKER_SHARDS'));
  if (!e || e.value.length === 0) throw new KitFailure(`no POD_WORKER_SHARDS setting at ${sharedSettingKey(t.node, 'POD_WORKER_SHARDS')} in leases: is a pod worker running?`);
  return Number((JSON.parse(dec.decode(e.value)) as { value: string }).value);
}

/** The sync loop as the kit plays it: dispatches, the statuses and work-done it hears back. */
class FakeSyncLoop {
  readonly statuses: { verb: string; status: PodStatus }[] = [];
  readonly done: { at: number; error?: string }[] = [];
  private readonly subs: { unsubscribe(): void }[] = [];
  constructor(private readonly t: KitTarget, readonly pod: Pod, private readonly shards: number) {
    const uid = pod.metadata.uid ?? '';
    this.subs.push(
      t.nc.subscribe(`kubelet.${t.node}.status.*.${uid}`, {
        callback: (_e, m: Msg) => {
          const c = JSON.parse(dec.decode(m.data)) as StatusCommandMessage;
          const status = c.args['status'] as PodStatus | undefined;
          if (status) this.statuses.push({ verb: m.subject.split('.')[3] ?? '', status });
        },
      }),
      t.nc.subscribe(Subjects.workDone.build(t.node, uid), {
        callback: (_e, m: Msg) => {
          const d = JSON.parse(dec.decode(m.data)) as { error?: string };
          this.done.push({ at: Date.now(), ...(d.error ? { error: d.error } : {}) });
        },
      }),
    );
  }
  get uid(): string {
    return this.pod.metadata.uid ?? '';
  }
  get shard(): number {
    return shardOf(this.uid, this.shards);
  }
  /** The podManager's record of the pod, as the sync loop keeps it in `pods` (`<node>.pod.<uid>`); removed at the end. */
  desire(desired: boolean): Promise<void> {
    return desirePod(this.t, this.pod, desired);
  }
  /** dispatchWork: a request to the pod's shard, sent again each second until a replica accepts it. */
  async dispatch(updateType: SyncPodType, extra: Record<string, unknown> = {}): Promise<WorkAcceptedMessage> {
    const body = enc.encode(JSON.stringify({ type: MessageTypes.updatePodOptions, updateType, startTime: new Date().toISOString(), pod: this.pod, ...extra }));
    return expectWithin(`work_accepted for ${updateType} of ${this.uid} on ${Subjects.work.build(this.t.node, this.shard, this.uid)}`, async () => {
      try {
        const m = await this.t.nc.request(Subjects.work.build(this.t.node, this.shard, this.uid), body, { timeout: 1000 });
        const a = JSON.parse(dec.decode(m.data)) as WorkAcceptedMessage;
        return a.type === MessageTypes.workAccepted ? a : undefined;
      } catch {
        return undefined;
      }
    }, this.t.timeoutMs);
  }
  seen(): string {
    const last = this.statuses.at(-1);
    return `${this.statuses.length} status(es)${last ? `, last ${last.verb} ${last.status.phase ?? ''} [${(last.status.containerStatuses ?? []).map((c) => `${c.name}: ${Object.keys(c.state ?? {}).join('')}`).join(', ')}]` : ''}; ${this.done.length} work-done`;
  }
  stop(): void {
    for (const s of this.subs) s.unsubscribe();
  }
}

function kitPod(name: string, command: string[], grace = 2): Pod {
  const uid = randomUUID();
  return {
    metadata: { uid, name: `kit-${name}-${uid.slice(0, 8)}`, namespace: 'contract-kit', creationTimestamp: new Date().toISOString() },
    spec: { hostNetwork: true, restartPolicy: 'Always', terminationGracePeriodSeconds: grace, containers: [{ name: 'main', image: IMAGE, imagePullPolicy: 'Never', command }] },
  };
}

const RUNS = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

async function running(t: KitTarget, s: FakeSyncLoop): Promise<string> {
  const ctr = await expectWithin(`the pod's container running in the runtime (labels ${KubeletLabels.podUid}=${s.uid}, ${KubeletLabels.node}=${t.node})`, async () => {
    const list = await t.cri.runtime('ListContainers', { filter: { labelSelector: { [KubeletLabels.podUid]: s.uid } } });
    return list.containers.find((c) => c.state === 'CONTAINER_RUNNING' && c.labels[KubeletLabels.node] === t.node);
  }, t.timeoutMs);
  await expectWithin(`SetPodStatus with container main running on kubelet.${t.node}.status.SetPodStatus.${s.uid}`, () => s.statuses.find((x) => x.verb === 'SetPodStatus' && x.status.containerStatuses?.some((c) => c.name === 'main' && c.state?.running)), t.timeoutMs, () => s.seen());
  await expectWithin(`work-done for ${s.uid} on ${Subjects.workDone.build(t.node, s.uid)}`, () => s.done[0], t.timeoutMs, () => s.seen());
  return ctr.id;
}

async function cleanUp(t: KitTarget, uid: string): Promise<void> {
  const filter = { labelSelector: { [KubeletLabels.podUid]: uid } };
  for (const c of (await t.cri.runtime('ListContainers', { filter }).catch(() => ({ containers: [] }))).containers) {
    await t.cri.runtime('StopContainer', { containerId: c.id, timeout: '0' }).catch(() => undefined);
    await t.cri.runtime('RemoveContainer', { containerId: c.id }).catch(() => undefined);
  }
  for (const s of (await t.cri.runtime('ListPodSandbox', { filter }).catch(() => ({ items: [] }))).items) {
    await t.cri.runtime('StopPodSandbox', { podSandboxId: s.id }).catch(() => undefined);
    await t.cri.runtime('RemovePodSandbox', { podSandboxId: s.id }).catch(() => undefined);
  }
}

/** A kit pod created (SyncPodCreate) and running; killed and removed from the runtime when `fn` ends. */
async function withRunningPod(t: KitTarget, name: string, fn: (s: FakeSyncLoop, containerId: string) => Promise<void>): Promise<void> {
  const s = new FakeSyncLoop(t, kitPod(name, RUNS), await shardCount(t));
  await t.nc.flush();
  try {
    await s.desire(true);
    await s.dispatch('SyncPodCreate');
    await fn(s, await running(t, s));
  } finally {
    await s.desire(false).catch(() => undefined);
    await s.dispatch('SyncPodKill').catch(() => undefined);
    s.stop();
    await cleanUp(t, s.uid);
  }
}

export const POD_WORKER_CHECKS: readonly KitCheck[] = [
  {
    name: 'the shards: every one of POD_WORKER_SHARDS held by a replica in leases',
    async run(t, note) {
      const n = await shardCount(t);
      const kv = await new Kvm(t.nc).open('leases');
      const owners: string[] = [];
      for (let shard = 0; shard < n; shard++) {
        const key = kvKey(t.node, 'pod-worker-shard', String(shard));
        const lease = await expectWithin(`a lease at ${key}`, async () => {
          const e = await kv.get(key);
          return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(dec.decode(e.value)) as { owner: string; expiresAt: number }) : undefined;
        }, t.timeoutMs);
        owners.push(lease.owner);
      }
      note(`${n} shards: ${[...new Set(owners)].map((o) => `${o} ${owners.filter((x) => x === o).length}`).join(', ')}`);
    },
  },
  {
    name: 'SyncPodCreate: accepted by the shard, the pod run, its workers record, SetPodStatus running, work-done',
    async run(t, note) {
      await withRunningPod(t, 'create', async (s, id) => {
        const kv = await new Kvm(t.nc).open('workers');
        await expectWithin(`the pod's workers record at ${kvKey(t.node, s.uid)}`, async () => ((await kv.get(kvKey(t.node, s.uid)))?.value.length ? true : undefined), t.timeoutMs);
        note(`container ${id.slice(0, 12)} on shard ${s.shard}; ${s.seen()}`);
      });
    },
  },
  {
    name: 'SyncPodKill: the containers stopped, a status with every container terminated, the workers record finished',
    async run(t, note) {
      await withRunningPod(t, 'kill', async (s, id) => {
        await s.desire(false);
        await s.dispatch('SyncPodKill');
        await expectWithin(`container ${id.slice(0, 12)} stopped in the runtime`, async () => ((await t.cri.runtime('ContainerStatus', { containerId: id })).status?.state === 'CONTAINER_EXITED' ? true : undefined), t.timeoutMs);
        await expectWithin(`a status with container main terminated`, () => s.statuses.find((x) => x.status.containerStatuses?.some((c) => c.name === 'main' && c.state?.terminated)), t.timeoutMs, () => s.seen());
        const kv = await new Kvm(t.nc).open('workers');
        let record: { finished?: boolean; terminatedAt?: number } | undefined;
        await expectWithin(`the workers record ${kvKey(t.node, s.uid)} finished`, async () => {
          const e = await kv.get(kvKey(t.node, s.uid));
          record = e && e.value.length > 0 ? (JSON.parse(dec.decode(e.value)) as { finished?: boolean; terminatedAt?: number }) : undefined;
          return record?.finished ? true : undefined;
        }, t.timeoutMs, () => JSON.stringify(record ?? null));
        note(s.seen());
      });
    },
  },
  {
    name: 'bad input on its work subjects: not accepted, and the work after it is',
    async run(t, note) {
      const n = await shardCount(t);
      for (const junk of ['{not json', JSON.stringify({ type: 'kubelet.v9.unknown' }), JSON.stringify({ type: MessageTypes.updatePodOptions, updateType: 'SyncPodCreate', startTime: 'x' })]) {
        const uid = randomUUID();
        try {
          const m = await t.nc.request(Subjects.work.build(t.node, shardOf(uid, n), uid), enc.encode(junk), { timeout: 2000 });
          const reply = JSON.parse(dec.decode(m.data)) as { type?: string };
          if (reply.type === MessageTypes.workAccepted) throw new KitFailure(`${junk} was accepted as work: ${dec.decode(m.data)}`);
        } catch (err) {
          if (err instanceof KitFailure) throw err;
        }
      }
      await withRunningPod(t, 'after-junk', (s) => Promise.resolve(note(`after 3 bad dispatches: ${s.seen()}`)));
    },
  },
  {
    name: 'restarted: a running pod keeps its container, and its work is accepted after it',
    needsRestart: true,
    async run(t, note) {
      await withRunningPod(t, 'restart', async (s, id) => {
        await t.restart?.();
        await s.dispatch('SyncPodSync');
        const st = await t.cri.runtime('ContainerStatus', { containerId: id });
        if (st.status?.state !== 'CONTAINER_RUNNING') throw new KitFailure(`container ${id.slice(0, 12)} is ${st.status?.state ?? 'gone'} after the pod worker restarted`);
        const list = await t.cri.runtime('ListContainers', { filter: { labelSelector: { [KubeletLabels.podUid]: s.uid } } });
        if (list.containers.length !== 1) throw new KitFailure(`the pod has ${list.containers.length} containers after the restart (one expected: ${list.containers.map((c) => `${c.id.slice(0, 12)} ${c.state}`).join(', ')})`);
        note(`container ${id.slice(0, 12)} kept; ${s.seen()}`);
      });
    },
  },
];
