/**
 * The PLEG's contract, checked from outside (pkg/kubelet/pleg generic.go as
 * docs/contract.md gives it): it relists the runtime through cri-gateway
 * and, for each pod of its node (KubeletLabels.node) that changed,
 *  - writes the pod's entry in `pod-cache` (`<node>.pod.<uid>`: every
 *    sandbox's and container's status, the pod's IPs, a timestamp that
 *    never goes back) and the relist time in `<node>.global`;
 *  - publishes upstream's PodLifecycleEvents on `kubelet.<node>.pleg.<uid>`
 *    (ContainerStarted, ContainerDied, ContainerRemoved; data the
 *    container ID), each as the leader (Kubelet-Leader-Revision) and in the
 *    sender's name (Kubelet-Sender);
 *  - answers `kubelet.<node>.pleg.inspect.<uid>` with an entry newer than
 *    the sync that asked, before its next relist would;
 *  - holds the `leases` key `<node>.leader.pleg` while it leads;
 *  - keeps doing all of it after bad input, and after a restart.
 * Each check makes its own pod behind the node's back, through the CRI,
 * and removes it.
 */
import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { MessageTypes, Subjects, type PodCacheEntry, type PodCacheGlobal, type PodLifecycleEventMessage } from '@app/contracts';
import { KubeletLabels } from '@app/kube';
import { kvKey } from '@app/nats';
import { Headers } from '@app/tracing';
import { KitFailure, expectWithin, kitSandboxConfig, leaderLeaseCheck, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const dec = new TextDecoder();
const enc = new TextEncoder();

interface HeardEvent {
  event: PodLifecycleEventMessage;
  leaderRevision?: string;
  sender?: string;
}

/** Everything the PLEG says of one pod, from the moment it is made. */
class PodWatch {
  readonly heard: HeardEvent[] = [];
  private readonly sub;
  constructor(nc: NatsConnection, node: string, readonly uid: string) {
    this.sub = nc.subscribe(Subjects.pleg.build(node, uid), {
      callback: (_e, m: Msg) => {
        try {
          this.heard.push({ event: JSON.parse(dec.decode(m.data)) as PodLifecycleEventMessage, leaderRevision: m.headers?.get(Headers.leaderRevision), sender: m.headers?.get(Headers.sender) });
        } catch {
          this.heard.push({ event: { type: MessageTypes.podLifecycleEvent, id: uid, eventType: 'PodSync', data: `unparsable: ${dec.decode(m.data).slice(0, 80)}` } });
        }
      },
    });
  }
  find(eventType: string, data?: string): HeardEvent | undefined {
    return this.heard.find((h) => h.event.eventType === eventType && (data === undefined || h.event.data === data));
  }
  seen(): string {
    return this.heard.length === 0 ? 'no event for the pod' : this.heard.map((h) => `${h.event.eventType}${h.event.data ? ` ${h.event.data.slice(0, 12)}` : ''}`).join(', ');
  }
  stop(): void {
    this.sub.unsubscribe();
  }
}

/** A pod made behind the node's back: a hostNetwork sandbox of the node, with one container. */
class KitPod {
  readonly uid = randomUUID();
  readonly name: string;
  sandboxId = '';
  containerId = '';
  constructor(private readonly t: KitTarget, name: string) {
    this.name = `kit-${name}-${this.uid.slice(0, 8)}`;
  }
  private get config() {
    return kitSandboxConfig(this.t, this.uid, this.name);
  }
  async run(command: string[]): Promise<void> {
    const config = this.config;
    this.sandboxId = (await this.t.cri.runtime('RunPodSandbox', { config })).podSandboxId;
    this.containerId = (
      await this.t.cri.runtime('CreateContainer', {
        podSandboxId: this.sandboxId,
        config: { metadata: { name: 'main', attempt: 0 }, image: { image: IMAGE }, command, labels: { [KubeletLabels.containerName]: 'main', [KubeletLabels.podUid]: this.uid, [KubeletLabels.podName]: this.name, [KubeletLabels.podNamespace]: 'contract-kit', [KubeletLabels.node]: this.t.node }, logPath: 'main.log' },
        sandboxConfig: config,
      })
    ).containerId;
    await this.t.cri.runtime('StartContainer', { containerId: this.containerId });
  }
  async remove(): Promise<void> {
    if (this.containerId) await this.t.cri.runtime('RemoveContainer', { containerId: this.containerId }).catch(() => undefined);
    if (this.sandboxId) {
      await this.t.cri.runtime('StopPodSandbox', { podSandboxId: this.sandboxId }).catch(() => undefined);
      await this.t.cri.runtime('RemovePodSandbox', { podSandboxId: this.sandboxId }).catch(() => undefined);
    }
  }
}

async function podCache(t: KitTarget): Promise<KV> {
  return new Kvm(t.nc).open('pod-cache');
}

async function entryOf(kv: KV, node: string, uid: string): Promise<PodCacheEntry | undefined> {
  const e = await kv.get(kvKey(node, 'pod', uid));
  return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(dec.decode(e.value)) as PodCacheEntry) : undefined;
}

interface CachedContainer {
  id?: string;
  state?: string;
  exitCode?: number;
}
interface CachedSandbox {
  id?: string;
  state?: string;
}

function containerIn(entry: PodCacheEntry | undefined, id: string): CachedContainer | undefined {
  return (entry?.containerStatuses as CachedContainer[] | undefined)?.find((c) => c.id === id);
}

function describeEntry(entry: PodCacheEntry | undefined): string {
  if (!entry) return 'no pod-cache entry';
  const cs = (entry.containerStatuses as CachedContainer[]).map((c) => `${(c.id ?? '').slice(0, 12)} ${c.state ?? '?'}${c.exitCode !== undefined ? ` exit ${c.exitCode}` : ''}`);
  const ss = (entry.sandboxStatuses as CachedSandbox[]).map((s) => `${(s.id ?? '').slice(0, 12)} ${s.state ?? '?'}`);
  return `entry at ${entry.timestamp}: sandboxes [${ss.join(', ')}], containers [${cs.join(', ')}]`;
}

/** A pod run by the kit and watched for its events, removed when `fn` ends whatever it did. */
async function withPod(t: KitTarget, name: string, command: string[], fn: (pod: KitPod, watch: PodWatch, kv: KV) => Promise<void>): Promise<void> {
  const pod = new KitPod(t, name);
  const watch = new PodWatch(t.nc, t.node, pod.uid);
  await t.nc.flush();
  try {
    await pod.run(command);
    await fn(pod, watch, await podCache(t));
  } finally {
    watch.stop();
    await pod.remove();
  }
}

async function startedAndCached(t: KitTarget, pod: KitPod, watch: PodWatch, kv: KV): Promise<void> {
  await expectWithin(`ContainerStarted for container ${pod.containerId.slice(0, 12)} on ${Subjects.pleg.build(t.node, pod.uid)}`, () => watch.find('ContainerStarted', pod.containerId), t.timeoutMs, () => watch.seen());
  let last: PodCacheEntry | undefined;
  await expectWithin(
    `a pod-cache entry ${kvKey(t.node, 'pod', pod.uid)} with the container CONTAINER_RUNNING and the sandbox SANDBOX_READY`,
    async () => {
      last = await entryOf(kv, t.node, pod.uid);
      const sandboxReady = (last?.sandboxStatuses as CachedSandbox[] | undefined)?.some((s) => s.id === pod.sandboxId && s.state === 'SANDBOX_READY');
      return sandboxReady && containerIn(last, pod.containerId)?.state === 'CONTAINER_RUNNING' ? true : undefined;
    },
    t.timeoutMs,
    () => describeEntry(last),
  );
}

/** pleg/generic.go RelistThreshold: a generic PLEG's, the default when the PLEG writes none. */
const GENERIC_RELIST_THRESHOLD_MS = 3 * 60_000;

const RUNS = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

export const PLEG_CHECKS: readonly KitCheck[] = [
  leaderLeaseCheck('pleg'),
  {
    name: 'relists: <node>.global in pod-cache within its relist threshold, moving forward at the generic period (or, evented, its sign of life between relists)',
    async run(t, note) {
      const kv = await podCache(t);
      const read = async () => {
        const e = await kv.get(kvKey(t.node, 'global'));
        return e && e.value.length > 0 ? (JSON.parse(dec.decode(e.value)) as PodCacheGlobal) : undefined;
      };
      const first = await expectWithin(`a relist time at ${kvKey(t.node, 'global')} in pod-cache`, read, t.timeoutMs);
      const threshold = first.relistThresholdMs ?? GENERIC_RELIST_THRESHOLD_MS;
      const age = Date.now() - first.timestamp;
      // What the sync loop's gate reads (plegHealth): a relist older than its threshold stops the node's syncs.
      if (age > threshold) throw new KitFailure(`${kvKey(t.node, 'global')}'s relist time is ${Math.round(age / 1000)} s old, past its threshold of ${Math.round(threshold / 1000)} s`);
      if (threshold > GENERIC_RELIST_THRESHOLD_MS) {
        // An evented PLEG (KEP-3386) relists every 5 minutes as a safety net and says so with a longer threshold: not
        // waited for. Between its relists it must show it is alive (aliveAt), or a PLEG that stops is seen only after 10 min.
        if (first.aliveAt === undefined) throw new KitFailure(`${kvKey(t.node, 'global')} has a relist threshold of ${Math.round(threshold / 1000)} s and no aliveAt: a PLEG whose relists are minutes apart writes its sign of life between them, within aliveThresholdMs`);
        const aliveThreshold = first.aliveThresholdMs ?? GENERIC_RELIST_THRESHOLD_MS;
        const alive = await expectWithin(`${kvKey(t.node, 'global')}'s aliveAt later than ${first.aliveAt}`, async () => {
          const g = await read();
          return g?.aliveAt !== undefined && g.aliveAt > (first.aliveAt ?? 0) ? g : undefined;
        }, Math.max(t.timeoutMs, aliveThreshold));
        if (alive.timestamp < first.timestamp) throw new KitFailure(`${kvKey(t.node, 'global')}'s relist time went back from ${first.timestamp} to ${alive.timestamp} with a heartbeat`);
        note(`relist time ${Math.round(age / 1000)} s old, within its threshold of ${Math.round(threshold / 1000)} s (an evented PLEG's: its relists are minutes apart); a sign of life ${(alive.aliveAt ?? 0) - (first.aliveAt ?? 0)} ms after the last (threshold ${Math.round(aliveThreshold / 1000)} s)`);
        return;
      }
      const later = await expectWithin(`${kvKey(t.node, 'global')} later than ${first.timestamp}`, async () => {
        const g = await read();
        return g && g.timestamp > first.timestamp ? g : undefined;
      }, t.timeoutMs);
      note(`relist time moved ${later.timestamp - first.timestamp} ms; relistThresholdMs ${later.relistThresholdMs ?? '(absent: 3 min)'}`);
    },
  },
  {
    name: 'a container started behind its back: ContainerStarted, as the leader in its own name, and a pod-cache entry with it running',
    async run(t, note) {
      await withPod(t, 'start', RUNS, async (pod, watch, kv) => {
        await startedAndCached(t, pod, watch, kv);
        const started = watch.find('ContainerStarted', pod.containerId);
        if (!started?.leaderRevision || !/^\d+$/.test(started.leaderRevision)) throw new KitFailure(`ContainerStarted carries no ${Headers.leaderRevision} header (the leader's fencing token); got ${JSON.stringify(started?.leaderRevision ?? null)}`);
        if (!started.sender?.startsWith('pleg@')) throw new KitFailure(`ContainerStarted carries no ${Headers.sender} header naming a pleg instance; got ${JSON.stringify(started.sender ?? null)}`);
        if (started.event.type !== MessageTypes.podLifecycleEvent || started.event.id !== pod.uid) throw new KitFailure(`ContainerStarted is not a ${MessageTypes.podLifecycleEvent} for pod ${pod.uid}: ${JSON.stringify(started.event)}`);
        note(`heard: ${watch.seen()}; from ${started.sender}, leader revision ${started.leaderRevision}`);
      });
    },
  },
  {
    name: 'a container that exits on its own: ContainerDied, and the entry shows it exited with its exit code',
    async run(t, note) {
      await withPod(t, 'dies', ['sh', '-c', 'sleep 2; exit 3'], async (pod, watch, kv) => {
        await expectWithin(`ContainerDied for container ${pod.containerId.slice(0, 12)} (it exited 3) on ${Subjects.pleg.build(t.node, pod.uid)}`, () => watch.find('ContainerDied', pod.containerId), t.timeoutMs, () => watch.seen());
        let last: PodCacheEntry | undefined;
        await expectWithin(`the pod-cache entry with container ${pod.containerId.slice(0, 12)} CONTAINER_EXITED, exitCode 3`, async () => {
          last = await entryOf(kv, t.node, pod.uid);
          const c = containerIn(last, pod.containerId);
          return c?.state === 'CONTAINER_EXITED' && c.exitCode === 3 ? true : undefined;
        }, t.timeoutMs, () => describeEntry(last));
        note(`heard: ${watch.seen()}`);
      });
    },
  },
  {
    name: 'a container removed and its sandbox gone: ContainerRemoved, and the entry removed or emptied',
    async run(t, note) {
      await withPod(t, 'removed', ['sh', '-c', 'exit 0'], async (pod, watch, kv) => {
        await expectWithin(`ContainerDied for container ${pod.containerId.slice(0, 12)}`, () => watch.find('ContainerDied', pod.containerId), t.timeoutMs, () => watch.seen());
        await t.cri.runtime('RemoveContainer', { containerId: pod.containerId });
        await expectWithin(`ContainerRemoved for container ${pod.containerId.slice(0, 12)} on ${Subjects.pleg.build(t.node, pod.uid)}`, () => watch.find('ContainerRemoved', pod.containerId), t.timeoutMs, () => watch.seen());
        await t.cri.runtime('StopPodSandbox', { podSandboxId: pod.sandboxId });
        await t.cri.runtime('RemovePodSandbox', { podSandboxId: pod.sandboxId });
        let last: PodCacheEntry | undefined;
        await expectWithin(`the pod-cache entry ${kvKey(t.node, 'pod', pod.uid)} deleted, or with no sandbox and no container`, async () => {
          last = await entryOf(kv, t.node, pod.uid);
          return !last || (last.sandboxStatuses.length === 0 && last.containerStatuses.length === 0) ? true : undefined;
        }, t.timeoutMs, () => describeEntry(last));
        note(`heard: ${watch.seen()}; entry ${last ? 'emptied' : 'deleted'}`);
      });
    },
  },
  {
    name: 'an inspection asked on kubelet.<node>.pleg.inspect.<uid>: an entry newer than the sync that asked',
    async run(t, note) {
      await withPod(t, 'inspect', RUNS, async (pod, watch, kv) => {
        await startedAndCached(t, pod, watch, kv);
        const syncEnd = Date.now();
        const asked = performance.now();
        t.nc.publish(Subjects.plegInspect.build(t.node, pod.uid), enc.encode(JSON.stringify({ type: MessageTypes.inspectPod, podUid: pod.uid, syncEnd })));
        let last: PodCacheEntry | undefined;
        await expectWithin(`a pod-cache entry for ${pod.uid} with a timestamp after syncEnd ${syncEnd}`, async () => {
          last = await entryOf(kv, t.node, pod.uid);
          return last && last.timestamp > syncEnd ? true : undefined;
        }, t.timeoutMs, () => describeEntry(last));
        note(`answered ${Math.round(performance.now() - asked)} ms after the request`);
      });
    },
  },
  {
    name: 'bad input (not JSON, a wrong type, a missing field) on its subjects: ignored, and it goes on working',
    async run(t, note) {
      const junk = ['{not json', JSON.stringify({ type: 'kubelet.v9.unknown' }), JSON.stringify({ type: MessageTypes.inspectPod }), JSON.stringify({ type: MessageTypes.inspectPod, podUid: 42, syncEnd: 'soon' })];
      for (const j of junk) {
        t.nc.publish(Subjects.plegInspect.build(t.node, randomUUID()), enc.encode(j));
        t.nc.publish(Subjects.criEvents.build(t.node), enc.encode(j));
      }
      await t.nc.flush();
      await withPod(t, 'after-junk', RUNS, async (pod, watch, kv) => {
        await startedAndCached(t, pod, watch, kv);
        note(`after ${junk.length * 2} bad messages: ${watch.seen()}`);
      });
    },
  },
  {
    name: 'restarted: a container started while it was down is seen once it is back',
    needsRestart: true,
    async run(t, note) {
      const restarting = t.restart?.();
      await withPod(t, 'restart', RUNS, async (pod, watch, kv) => {
        await restarting;
        await startedAndCached(t, pod, watch, kv);
        note(`heard: ${watch.seen()}`);
      });
    },
  },
];
