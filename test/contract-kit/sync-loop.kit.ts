/**
 * The sync loop's contract, checked from outside (kubelet.go syncLoop,
 * HandlePodAdditions/Removals, dispatchWork): the kit plays the pod
 * sources and the pod workers. For a pod a source adds on
 * `kubelet.<node>.config.add` it
 *  - stores the pod in `pods` (`<node>.pod.<uid>`);
 *  - dispatches SyncPodCreate on `kubelet.<node>.work.<shard>.<uid>` as a
 *    request, sent again until a pod worker accepts it (work_accepted);
 *  - names it among the pods whose probes may go on in housekeeping's
 *    CleanupPods on `kubelet.<node>.prober.CleanupPods`;
 * for the PLEG's ContainerStarted on `kubelet.<node>.pleg.<uid>` it
 * dispatches SyncPodSync; for a source's remove it dispatches SyncPodKill;
 * once the kit's worker says a removed pod finished (its `workers` record),
 * it forgets the pod (its record leaves `pods`);
 * it holds the leases key `<node>.leader.sync-loop`, keeps working after
 * bad input, and after a restart. The pods are the kit's own (source
 * `http`, a nodeName and no runtime state): no container is ever run for
 * them, since no pod worker but the kit's answers.
 */
import { randomUUID } from 'node:crypto';
import type { Msg } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { MessageTypes, Subjects, type Pod, type ProberCommandMessage, type UpdatePodOptionsMessage } from '@app/contracts';
import { leaderLeaseKey, type LeaderElectionRecord } from '@app/leader-election';
import { kvKey } from '@app/nats';
import { KitFailure, expectWithin, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const enc = new TextEncoder();
const dec = new TextDecoder();

interface Dispatch {
  at: number;
  shard: number;
  update: UpdatePodOptionsMessage;
  accepted: boolean;
}

/** The pod workers as the kit plays them: every dispatch heard, answered (or not) as the test says. */
class FakeWorkers {
  readonly dispatches: Dispatch[] = [];
  readonly proberCommands: { verb: string; uids: string[] }[] = [];
  /** UIDs whose dispatches are left unanswered. */
  readonly refuse = new Set<string>();
  private readonly subs: { unsubscribe(): void }[] = [];
  constructor(private readonly t: KitTarget) {
    this.subs.push(
      t.nc.subscribe(`kubelet.${t.node}.work.*.*`, {
        callback: (_e, m: Msg) => {
          const parsed = Subjects.work.parse(m.subject);
          if (!parsed) return;
          let update: UpdatePodOptionsMessage;
          try {
            update = JSON.parse(dec.decode(m.data)) as UpdatePodOptionsMessage;
          } catch {
            return;
          }
          const accepted = !this.refuse.has(parsed.uid);
          this.dispatches.push({ at: Date.now(), shard: parsed.shard, update, accepted });
          if (accepted && m.reply) m.respond(enc.encode(JSON.stringify({ type: MessageTypes.workAccepted, podUid: parsed.uid, shard: parsed.shard })));
          // A kill is done at once: the worker's record says the pod terminated and the worker finished, as a pod worker's does.
          if (accepted && update.updateType === 'SyncPodKill') void this.finish(parsed.uid);
        },
      }),
      t.nc.subscribe(Subjects.prober.wildcard(t.node), {
        callback: (_e, m: Msg) => {
          try {
            const c = JSON.parse(dec.decode(m.data)) as ProberCommandMessage;
            this.proberCommands.push({ verb: m.subject.split('.').at(-1) ?? '', uids: [...(c.pods ?? []).map((p) => p.metadata.uid ?? ''), ...(c.podUids ?? [])] });
          } catch {
            // not ours
          }
        },
      }),
    );
  }
  private async finish(uid: string): Promise<void> {
    const now = Date.now();
    const kv = await new Kvm(this.t.nc).open('workers');
    await kv.put(kvKey(this.t.node, uid), JSON.stringify({ syncedAt: now, terminatingAt: now, terminatedAt: now, gracePeriod: 0, finished: true }));
    this.done(uid);
  }
  of(uid: string, updateType?: string): Dispatch[] {
    return this.dispatches.filter((d) => d.update.pod?.metadata?.uid === uid && (updateType === undefined || d.update.updateType === updateType));
  }
  /** completeWork, as a pod worker says it once a sync ended. */
  done(uid: string, requeueAfterMs = 60_000): void {
    this.t.nc.publish(Subjects.workDone.build(this.t.node, uid), enc.encode(JSON.stringify({ type: MessageTypes.workDone, podUid: uid, requeueAfterMs })));
  }
  seen(uid: string): string {
    const d = this.of(uid);
    return d.length === 0 ? `no dispatch for ${uid} (${this.dispatches.length} in all)` : d.map((x) => `${x.update.updateType} to shard ${x.shard}${x.accepted ? '' : ' (not accepted)'}`).join(', ');
  }
  stop(): void {
    for (const s of this.subs) s.unsubscribe();
  }
}

function kitPod(t: KitTarget): Pod {
  const uid = randomUUID();
  return {
    metadata: { uid, name: `kit-sync-${uid.slice(0, 8)}`, namespace: 'contract-kit', annotations: { 'kubernetes.io/config.source': 'http' } },
    spec: { nodeName: t.node, containers: [{ name: 'main', image: IMAGE }] },
  };
}

function source(t: KitTarget, op: 'add' | 'remove', pod: Pod): void {
  t.nc.publish(Subjects.podUpdate.build(t.node, op), enc.encode(JSON.stringify({ type: MessageTypes.podUpdate, op, source: 'http', pods: [pod] })));
}

async function withWorkers(t: KitTarget, fn: (w: FakeWorkers) => Promise<void>): Promise<void> {
  const w = new FakeWorkers(t);
  await t.nc.flush();
  try {
    await fn(w);
  } finally {
    w.stop();
  }
}

/** A pod added by the kit's source and dispatched as SyncPodCreate, accepted and done; removed at the end. */
async function withAddedPod(t: KitTarget, w: FakeWorkers, fn: (pod: Pod) => Promise<void>): Promise<void> {
  const pod = kitPod(t);
  const uid = pod.metadata.uid ?? '';
  source(t, 'add', pod);
  try {
    await expectWithin(`a SyncPodCreate dispatch for pod ${uid} on kubelet.${t.node}.work.<shard>.${uid}`, () => w.of(uid, 'SyncPodCreate')[0], t.timeoutMs, () => w.seen(uid));
    w.done(uid);
    await fn(pod);
  } finally {
    source(t, 'remove', pod);
  }
  await forgotten(t, uid);
}

/** Once its worker finished, the sync loop forgets a removed pod: its record leaves `pods`. */
async function forgotten(t: KitTarget, uid: string): Promise<void> {
  const kv = await new Kvm(t.nc).open('pods');
  await expectWithin(`the removed pod's record ${kvKey(t.node, 'pod', uid)} gone from pods once its worker finished`, async () => {
    const e = await kv.get(kvKey(t.node, 'pod', uid));
    return !e || e.operation !== 'PUT' || e.value.length === 0 ? true : undefined;
  }, t.timeoutMs);
}

export const SYNC_LOOP_CHECKS: readonly KitCheck[] = [
  {
    name: 'leads: holds the leases key <node>.leader.sync-loop',
    async run(t, note) {
      const kv = await new Kvm(t.nc).open('leases');
      const key = leaderLeaseKey(t.node, 'sync-loop');
      const r = await expectWithin(`a leader lease at ${key}`, async () => {
        const e = await kv.get(key);
        return e && e.value.length > 0 ? (JSON.parse(dec.decode(e.value)) as LeaderElectionRecord) : undefined;
      }, t.timeoutMs);
      if (Date.now() - Date.parse(r.renewTime) > r.leaseDurationMs * 2) throw new KitFailure(`the lease at ${key} was last renewed at ${r.renewTime}, more than twice its ${r.leaseDurationMs} ms ago`);
      note(`holder ${r.holderIdentity}`);
    },
  },
  {
    name: 'a pod a source adds: stored in pods, dispatched as SyncPodCreate to its shard, and kept by the prober\'s CleanupPods',
    async run(t, note) {
      await withWorkers(t, async (w) => {
        await withAddedPod(t, w, async (pod) => {
          const uid = pod.metadata.uid ?? '';
          const kv = await new Kvm(t.nc).open('pods');
          await expectWithin(`the pod in the pods bucket at ${kvKey(t.node, 'pod', uid)}`, async () => ((await kv.get(kvKey(t.node, 'pod', uid)))?.value.length ? true : undefined), t.timeoutMs);
          // Housekeeping's probeManager.CleanupPods names the desired pods, whose probe workers may keep running (AddPod is the pod worker's, in SyncPod).
          await expectWithin(`a CleanupPods on kubelet.${t.node}.prober.CleanupPods that keeps ${uid}`, () => w.proberCommands.find((c) => c.verb === 'CleanupPods' && c.uids.includes(uid)), t.timeoutMs, () => w.proberCommands.map((c) => `${c.verb} [${c.uids.length}]`).join(', ') || 'no prober command');
          const d = w.of(uid, 'SyncPodCreate')[0];
          if (!d || d.update.type !== MessageTypes.updatePodOptions || !d.update.startTime) throw new KitFailure(`the dispatch is not an ${MessageTypes.updatePodOptions} with a startTime: ${JSON.stringify(d?.update ?? null).slice(0, 200)}`);
          note(`dispatched to shard ${d.shard}; heard: ${w.seen(uid)}`);
        });
      });
    },
  },
  {
    name: 'a dispatch no pod worker accepts is sent again until one does',
    async run(t, note) {
      await withWorkers(t, async (w) => {
        const pod = kitPod(t);
        const uid = pod.metadata.uid ?? '';
        w.refuse.add(uid);
        source(t, 'add', pod);
        try {
          await expectWithin(`a second SyncPodCreate dispatch for ${uid} after the first was not accepted`, () => (w.of(uid, 'SyncPodCreate').length >= 2 ? true : undefined), t.timeoutMs, () => w.seen(uid));
          w.refuse.delete(uid);
          const n = w.of(uid).length;
          await expectWithin(`a dispatch for ${uid} accepted once the kit answers`, () => w.of(uid).slice(n).find((d) => d.accepted), t.timeoutMs, () => w.seen(uid));
          w.done(uid);
          const [a, b] = w.of(uid, 'SyncPodCreate');
          note(`sent again ${(b?.at ?? 0) - (a?.at ?? 0)} ms after the first; heard: ${w.seen(uid)}`);
        } finally {
          w.refuse.delete(uid);
          source(t, 'remove', pod);
        }
        await forgotten(t, uid);
      });
    },
  },
  {
    name: 'the PLEG\'s ContainerStarted for a pod: a SyncPodSync dispatch',
    async run(t, note) {
      await withWorkers(t, async (w) => {
        await withAddedPod(t, w, async (pod) => {
          const uid = pod.metadata.uid ?? '';
          t.nc.publish(Subjects.pleg.build(t.node, uid), enc.encode(JSON.stringify({ type: MessageTypes.podLifecycleEvent, id: uid, eventType: 'ContainerStarted', data: 'c0ffee' })));
          await expectWithin(`a SyncPodSync dispatch for ${uid} after ContainerStarted`, () => w.of(uid, 'SyncPodSync')[0], t.timeoutMs, () => w.seen(uid));
          w.done(uid);
          note(`heard: ${w.seen(uid)}`);
        });
      });
    },
  },
  {
    name: 'a pod a source removes: a SyncPodKill dispatch, and the pod forgotten once its worker finished',
    async run(t, note) {
      await withWorkers(t, async (w) => {
        let uid = '';
        // withAddedPod's source removes the pod once it is done with it.
        await withAddedPod(t, w, (pod) => Promise.resolve(void (uid = pod.metadata.uid ?? '')));
        await expectWithin(`a SyncPodKill dispatch for ${uid} after its source removed it`, () => w.of(uid, 'SyncPodKill')[0], t.timeoutMs, () => w.seen(uid));
        w.done(uid);
        note(`heard: ${w.seen(uid)}`);
      });
    },
  },
  {
    name: 'bad input (not JSON, wrong types) on its subjects: ignored, and it goes on dispatching',
    async run(t, note) {
      const junk = ['{not json', JSON.stringify({ type: 'kubelet.v9.unknown' }), JSON.stringify({ type: MessageTypes.podUpdate, op: 'add', source: 'http', pods: [{ metadata: 7 }] }), JSON.stringify({ type: MessageTypes.podLifecycleEvent, id: 42 })];
      for (const j of junk) {
        t.nc.publish(Subjects.podUpdate.build(t.node, 'add'), enc.encode(j));
        t.nc.publish(Subjects.pleg.build(t.node, randomUUID()), enc.encode(j));
        t.nc.publish(Subjects.workDone.build(t.node, randomUUID()), enc.encode(j));
      }
      await t.nc.flush();
      await withWorkers(t, async (w) => {
        await withAddedPod(t, w, (pod) => Promise.resolve(note(`after ${junk.length * 3} bad messages: ${w.seen(pod.metadata.uid ?? '')}`)));
      });
    },
  },
  {
    name: 'restarted: a pod added after it is back is dispatched',
    needsRestart: true,
    async run(t, note) {
      await t.restart?.();
      await withWorkers(t, async (w) => {
        await withAddedPod(t, w, (pod) => Promise.resolve(note(`heard: ${w.seen(pod.metadata.uid ?? '')}`)));
      });
    },
  },
];
