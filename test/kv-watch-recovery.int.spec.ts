/**
 * Every KV watcher of the node recovers from a dead watch (issue 28, item
 * 10), against a real nats-server. Each watcher is built as its service
 * builds it, on a connection of that service's NATS user, and listed below
 * by name; two faults are injected, each while every watcher follows its
 * bucket:
 *  - the watches' consumers deleted on the server (`$JS.API.CONSUMER.DELETE`,
 *    what an operator's `nats consumer rm`, or a server that lost them, does);
 *  - nats-server restarted: stopped, then started again on the same port and
 *    store directory.
 * After each fault, ONE BY ONE, the test writes a change to the watcher's
 * bucket and waits until that watcher shows it: a mirror's read, the pod
 * cache's waiting GetNewerThan (a pod worker waiting on the cache, armed
 * before the fault, wakes), node-status's followed desired pods. Not
 * inferred from a node that converges. The time each took is printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jetstreamManager } from '@nats-io/jetstream';
import { SystemClock } from '@app/clock';
import type { ServiceName } from '@app/service';
import type { PodCacheEntry, PodRecord, PodSyncStatusRecord, ProbeResultRecord, VersionedPodStatusRecord } from '@app/contracts';
import { BUCKETS, connectNats, ensureBuckets, grantedBuckets, inboxPrefix, kvStream, podStatusStore, podWorkersStore, probeResultsStore, type BucketId, type KV, type NatsConnection } from '@app/nats';
import { silentLogger } from '@app/observability';
import { KvPodCache, podCacheKey } from '@app/pod-cache';
import { KvPodReadModel, podManagerStore } from '@app/pod-manager';
import { KvNodeState } from '../apps/sync-loop/src/adapters/kv-node-state.js';
import { KvDesiredPods } from '../apps/pod-worker/src/adapters/kv-desired-pods.js';
import { KvWorkerStore } from '../apps/pod-worker/src/adapters/kv-worker-store.js';
import { KvDesiredPodsView } from '../apps/node-status/src/adapters/kv-desired-pods-view.js';
import { startNats, type NatsServer } from '../deploy/local/stack.js';

const NODE = 'watch-node';
/** How long a watcher may take to show a change made after the fault: a hang, not a slow machine, fails it. */
const BOUND_MS = 45_000;
const clock = new SystemClock();
const logger = silentLogger();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A started watcher, seen from outside: whether it shows the change marked `n`. */
interface Follower {
  /** Called before the fault with the mark of the change to come (the pod cache: a pod worker starts waiting). */
  arm?(n: number): void;
  sees(n: number): boolean | Promise<boolean>;
  stop(): void;
}

type Buckets = Record<BucketId, KV>;

interface Watcher {
  name: string;
  user: ServiceName;
  /** The bucket it watches, where the change is written. */
  bucket: BucketId;
  /** Starts it on its service's handles of the buckets (`writer`: the admin's, to set up what it needs). */
  follow(kv: Buckets, writer: Buckets): Promise<Follower>;
  /** Writes the change marked `n` (as the bucket's writer would). */
  write(kv: KV, n: number): Promise<void>;
}

const podRecord = (uid: string, n: number): PodRecord => ({ pod: { metadata: { name: `p-${uid}`, namespace: 'default', uid, labels: { mark: String(n) } }, spec: { containers: [] } }, source: 'file', addedAt: n, admitted: true });
const workerRecord = (n: number): PodSyncStatusRecord => ({ syncedAt: n });
const statusRecord = (uid: string, n: number): VersionedPodStatusRecord => ({ version: n, podName: `p-${uid}`, podNamespace: 'default', status: { phase: 'Running', message: String(n) } });
const cacheEntry = (uid: string, n: number): PodCacheEntry => ({ uid, name: `p-${uid}`, namespace: 'default', timestamp: n, sandboxStatuses: [], containerStatuses: [], ips: [] });
const probeResult = (uid: string, n: number): ProbeResultRecord => ({ podUid: uid, containerName: 'c', probeType: 'readiness', containerId: `c${n}`, result: 'Success', time: n });

/** The readiness the probe-results row last wrote, and what it wrote with each change. */
let readyNow = false;
const readyAt = new Map<number, boolean>();

const WATCHERS: Watcher[] = [
  {
    name: 'pod-worker: KvPodCache (pod-cache), a pod worker waiting in GetNewerThan wakes',
    user: 'pod-worker',
    bucket: 'podCache',
    follow: async (kv) => {
      const cache = new KvPodCache({ kv: kv.podCache, node: NODE, clock, logger });
      await cache.start();
      let woke: number | undefined;
      return {
        arm: (n) => void cache.getNewerThan('cache-uid', n - 1).then((r) => (woke = r.timestamp)),
        sees: (n) => woke !== undefined && woke >= n,
        stop: () => cache.stop(),
      };
    },
    write: async (kv, n) => void (await kv.put(podCacheKey(NODE, 'cache-uid'), JSON.stringify(cacheEntry('cache-uid', n)))),
  },
  {
    name: 'sync-loop: KvNodeState, its workers mirror',
    user: 'sync-loop',
    bucket: 'workers',
    follow: async (kv) => {
      const state = new KvNodeState({ workers: kv.workers, statuses: kv.podStatus, clock, logger }, NODE);
      await state.start();
      return { sees: (n) => state.mirrored().workers.get('sl-uid')?.syncedAt === n, stop: () => state.stop() };
    },
    write: async (kv, n) => void (await podWorkersStore(kv, NODE).put('sl-uid', workerRecord(n))),
  },
  {
    name: 'sync-loop: KvNodeState, its pod-status mirror',
    user: 'sync-loop',
    bucket: 'podStatus',
    follow: async (kv) => {
      const state = new KvNodeState({ workers: kv.workers, statuses: kv.podStatus, clock, logger }, NODE);
      await state.start();
      return { sees: (n) => state.mirrored().statuses.get('sl-uid')?.message === String(n), stop: () => state.stop() };
    },
    write: async (kv, n) => void (await podStatusStore(kv, NODE).put('sl-uid', statusRecord('sl-uid', n))),
  },
  {
    name: 'pod-worker: KvDesiredPods (pods mirror)',
    user: 'pod-worker',
    bucket: 'pods',
    follow: async (kv) => {
      const pods = new KvDesiredPods(kv.pods, NODE, clock, logger);
      await pods.start();
      return { sees: (n) => pods.mirrored().get('pw-uid')?.addedAt === n, stop: () => pods.stop() };
    },
    write: async (kv, n) => void (await podManagerStore(kv, NODE).put('pw-uid', podRecord('pw-uid', n))),
  },
  {
    name: 'pod-worker: KvWorkerStore (workers mirror)',
    user: 'pod-worker',
    bucket: 'workers',
    follow: async (kv) => {
      const store = new KvWorkerStore({ kv: kv.workers, node: NODE, clock, logger });
      await store.start();
      return { sees: (n) => store.mirrored().get('pw-uid')?.syncedAt === n, stop: () => store.stop() };
    },
    write: async (kv, n) => void (await podWorkersStore(kv, NODE).put('pw-uid', workerRecord(n))),
  },
  {
    name: 'kubelet-server: KvPodReadModel, its pods mirror (/pods)',
    user: 'kubelet-server',
    bucket: 'pods',
    follow: async (kv) => {
      const model = new KvPodReadModel({ pods: kv.pods, podStatus: kv.podStatus, node: NODE, clock, logger });
      await model.start();
      return { sees: async (n) => (await model.getPod('default', 'p-rm-uid'))?.metadata.labels?.mark === String(n), stop: () => model.stop() };
    },
    write: async (kv, n) => void (await podManagerStore(kv, NODE).put('rm-uid', podRecord('rm-uid', n))),
  },
  {
    name: 'kubelet-server: KvPodReadModel, its pod-status mirror (/pods)',
    user: 'kubelet-server',
    bucket: 'podStatus',
    follow: async (kv, writer) => {
      // Its pod is there (the mirror under test is pod-status).
      await podManagerStore(writer.pods, NODE).put('rs-uid', podRecord('rs-uid', 0));
      const model = new KvPodReadModel({ pods: kv.pods, podStatus: kv.podStatus, node: NODE, clock, logger });
      await model.start();
      return { sees: async (n) => (await model.getPod('default', 'p-rs-uid'))?.status?.message === String(n), stop: () => model.stop() };
    },
    write: async (kv, n) => void (await podStatusStore(kv, NODE).put('rs-uid', statusRecord('rs-uid', n))),
  },
  {
    name: 'kubelet-server: KvPodReadModel, its probe-results mirror (/pods readiness)',
    user: 'kubelet-server',
    bucket: 'probeResults',
    follow: async (kv, writer) => {
      // A running pod whose container is not ready in its stored status: a readiness Success shows it ready in /pods.
      const record = podRecord('pr-uid', 0);
      record.pod.spec = { containers: [{ name: 'c', image: 'busybox' }] };
      await podManagerStore(writer.pods, NODE).put('pr-uid', record);
      const status = { ...statusRecord('pr-uid', 0), status: { phase: 'Running', containerStatuses: [{ name: 'c', containerID: 'containerd://c-live', ready: false, restartCount: 0, image: 'busybox', imageID: '', state: { running: {} } }] } };
      await podStatusStore(writer.podStatus, NODE).put('pr-uid', status);
      const model = new KvPodReadModel({ pods: kv.pods, podStatus: kv.podStatus, probeResults: kv.probeResults, node: NODE, clock, logger });
      await model.start();
      return {
        sees: async (n) => (await model.getPod('default', 'p-pr-uid'))?.status?.containerStatuses?.[0]?.ready === readyAt.get(n),
        stop: () => model.stop(),
      };
    },
    // Each change flips the result (only a Success counts): what /pods shows after change n is readyAt(n).
    write: async (kv, n) => {
      const ready = !readyNow;
      readyNow = ready;
      readyAt.set(n, ready);
      await probeResultsStore(kv, NODE).put('pr-uid.c.readiness', { ...probeResult('pr-uid', n), containerId: 'c-live', result: ready ? 'Success' : 'Failure' });
    },
  },
  {
    name: 'node-status: KvDesiredPodsView (the desired pods the mirror pods follow)',
    user: 'node-status',
    bucket: 'pods',
    follow: async (kv) => {
      let pods: PodRecord[] | undefined;
      const stop = await new KvDesiredPodsView({ kv: kv.pods, node: NODE, clock, logger }).watch(
        (p) => (pods = p),
        () => (pods = undefined),
      );
      return { sees: (n) => pods?.find((p) => p.pod.metadata.uid === 'ns-uid')?.addedAt === n, stop };
    },
    write: async (kv, n) => void (await podManagerStore(kv, NODE).put('ns-uid', podRecord('ns-uid', n))),
  },
];

describe('every KV watcher recovers from a dead watch (real nats-server)', { timeout: 600_000 }, () => {
  let nats: NatsServer;
  let writer: NatsConnection;
  let writerKv: Buckets;
  const connections: NatsConnection[] = [];
  const followers: Follower[] = [];
  let mark = 1_000_000;

  before(async () => {
    nats = await startNats();
    writer = await connectNats({ servers: [nats.url], name: 'watch-recovery-writer', credentials: { user: nats.auth().user, password: nats.auth().pass }, logger });
    writerKv = await ensureBuckets(writer, Object.keys(BUCKETS) as BucketId[]);
    for (const w of WATCHERS) {
      const auth = nats.auth(w.user);
      const nc = await connectNats({ servers: [nats.url], name: `watch-recovery-${w.user}`, credentials: { user: auth.user, password: auth.pass }, inboxPrefix: inboxPrefix(w.user), logger });
      connections.push(nc);
      // The buckets its user may read (a handle of one it may not would fail on the server's permissions).
      const granted = grantedBuckets(w.user);
      const ids = (Object.keys(BUCKETS) as BucketId[]).filter((id) => granted.includes(BUCKETS[id].name));
      const kv: Buckets = await ensureBuckets(nc, ids);
      const f = await w.follow(kv, writerKv);
      followers.push(f);
      // It follows its bucket before any fault: a change now shows.
      const n = ++mark;
      f.arm?.(n);
      await w.write(writerKv[w.bucket], n);
      await waitSees(w, f, n);
    }
  });

  after(async () => {
    for (const f of followers) f.stop();
    for (const nc of connections) await nc.close();
    await writer?.close();
    await nats?.stop();
  });

  /** Waits until the follower shows the change `n`, bounded; returns how long it took. */
  async function waitSees(w: Watcher, f: Follower, n: number): Promise<number> {
    const t0 = performance.now();
    while (!(await f.sees(n))) {
      if (performance.now() - t0 > BOUND_MS) assert.fail(`${w.name}: the change ${n} written ${BOUND_MS / 1000} s ago is not seen`);
      await sleep(50);
    }
    return performance.now() - t0;
  }

  const faults: { name: string; inject: () => Promise<void> }[] = [
    {
      name: 'the watches\' consumers deleted on the server',
      inject: async () => {
        const jsm = await jetstreamManager(writer);
        let deleted = 0;
        for (const b of Object.values(BUCKETS)) {
          for (const c of await jsm.consumers.list(kvStream(b.name)).next()) {
            await jsm.consumers.delete(kvStream(b.name), c.name);
            deleted++;
          }
        }
        assert.ok(deleted >= WATCHERS.length, `deleted ${deleted} consumers, fewer than the ${WATCHERS.length} watchers`);
        process.stdout.write(`# deleted ${deleted} watch consumers\n`);
      },
    },
    ...[false, true].map((kill) => ({
      name: `nats-server ${kill ? 'killed (SIGKILL)' : 'stopped'} and started again (same port, same store directory)`,
      inject: async () => {
        await nats.restart({ downMs: 2000, kill });
        // The writer is back before it writes (the watchers reconnect on their own).
        const t0 = performance.now();
        while (writer.isClosed() || !(await writer.flush().then(() => true, () => false))) {
          if (performance.now() - t0 > BOUND_MS) assert.fail('the writer did not reconnect');
          await sleep(100);
        }
      },
    })),
  ];

  for (const fault of faults) {
    describe(`after ${fault.name}`, () => {
      const marks = new Map<Watcher, number>();
      const faultAt = { t: 0 };
      before(async () => {
        for (const [i, w] of WATCHERS.entries()) {
          const n = ++mark;
          marks.set(w, n);
          followers[i]?.arm?.(n);
        }
        await fault.inject();
        faultAt.t = performance.now();
      });

      for (const [i, w] of WATCHERS.entries()) {
        it(`${w.name}: shows a change written after the fault`, async () => {
          const n = marks.get(w) ?? 0;
          const f = followers[i];
          assert.ok(f, `${w.name} did not start`);
          await w.write(writerKv[w.bucket], n);
          const ms = await waitSees(w, f, n);
          process.stdout.write(`# ${fault.name}: ${w.name}: seen ${Math.round(ms)} ms after the write (${((performance.now() - faultAt.t) / 1000).toFixed(1)} s after the fault)\n`);
        });
      }
    });
  }
});
