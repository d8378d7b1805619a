/**
 * A deliberately broken PLEG, for showing that the contract kit catches a
 * subsystem that misses part of its contract: our own GenericPleg, leader
 * election and pod-cache store, in the test's process, whose event sink
 * drops every ContainerDied. Everything else it does as the PLEG does
 * (relist every second, the pod cache, the inspections, the lease).
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { SystemClock } from '@app/clock';
import { MessageTypes, Subjects, decodeMessage, type PodLifecycleEventMessage } from '@app/contracts';
import { NatsCriClient } from '@app/cri';
import { DEFAULT_LEADER_ELECTION, KvLeaderLeaseStore, LeaderElector } from '@app/leader-election';
import { NatsBus } from '@app/nats';
import { silentLogger } from '@app/observability';
import { KvPodCacheStore } from '../../../apps/pleg/src/adapters/kv-pod-cache-store.js';
import { NatsPlegEventSink } from '../../../apps/pleg/src/adapters/nats-pleg-event-sink.js';
import { GenericPleg } from '../../../apps/pleg/src/generic-pleg.js';

export interface BrokenPleg {
  /** The events it dropped. */
  readonly dropped: PodLifecycleEventMessage[];
  stop(): Promise<void>;
}

/** Starts the broken PLEG on `node` of the NATS at `url` (as `auth`, admin), under the connection name a pleg instance has. */
export async function startBrokenPleg(url: string, auth: { user: string; pass: string }, node: string): Promise<BrokenPleg> {
  const nc: NatsConnection = await connect({ servers: url, name: `pleg@${node}#broken`, ...auth });
  const kvm = new Kvm(nc);
  const clock = new SystemClock();
  const elector = new LeaderElector(new KvLeaderLeaseStore(await kvm.open('leases'), node, 'pleg'), clock, silentLogger(), { identity: 'broken', ...DEFAULT_LEADER_ELECTION });
  const real = new NatsPlegEventSink(new NatsBus(nc, 'pleg'), node, elector);
  const dropped: PodLifecycleEventMessage[] = [];
  const sink = { publish: (e: PodLifecycleEventMessage) => (e.eventType === 'ContainerDied' ? (dropped.push(e), true) : real.publish(e)) };
  const pleg = new GenericPleg(
    { cri: new NatsCriClient(nc, node, 'pleg'), cache: new KvPodCacheStore(await kvm.open('pod-cache'), node, elector), sink, clock, logger: silentLogger() },
    { inspectTimeoutMs: 10_000, inspectConcurrency: 4, relistThresholdMs: 180_000, node },
  );
  let timer: ReturnType<typeof setInterval> | undefined;
  elector.subscribe({
    onStartedLeading: async () => {
      await pleg.restore();
      timer = setInterval(() => void pleg.relist().catch(() => undefined), 1000);
    },
    onStoppedLeading: () => clearInterval(timer),
  });
  const inspections = nc.subscribe(Subjects.plegInspect.wildcard(node), {
    callback: (_e, m) => {
      try {
        const ask = decodeMessage(MessageTypes.inspectPod, JSON.parse(new TextDecoder().decode(m.data)));
        void pleg.inspectPod(ask.podUid, ask.syncEnd).catch(() => undefined);
      } catch {
        // Bad input is dropped, as the PLEG drops it.
      }
    },
  });
  elector.start();
  return {
    dropped,
    async stop() {
      clearInterval(timer);
      inspections.unsubscribe();
      await elector.stop();
      await nc.close();
    },
  };
}
