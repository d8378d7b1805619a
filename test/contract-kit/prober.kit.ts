/**
 * The prober's contract, checked from outside (pkg/kubelet/prober): it
 * takes the probeManager's calls on `kubelet.<node>.prober.<verb>` (AddPod,
 * RemovePod, ...) and the pod worker's statuses on
 * `kubelet.<node>.status.SetPodStatus.<uid>` (which container runs, since
 * when), runs each container's probes (exec probes through cri-gateway's
 * ExecSync), and for each result
 *  - writes `probe-results` `<node>.<uid>.<container>.<probeType>` (the
 *    container's ID, the result, when);
 *  - publishes a probe_result on `kubelet.<node>.probe.<probeType>.<uid>`
 *    when the result changes;
 *  - records an Unhealthy Warning event for a failed probe;
 * stops a pod's workers on RemovePod, and keeps working after bad input.
 * The pod is run by the kit through the CRI; its status is the one the
 * kit sends, as a pod worker would.
 */
import { randomUUID } from 'node:crypto';
import type { Msg } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { MessageTypes, Subjects, probeResultKey, type EventMessage, type Pod, type ProbeResultMessage, type ProbeResultRecord, type ProbeType } from '@app/contracts';
import { KubeletLabels } from '@app/kube';
import { kvKey } from '@app/nats';
import { KitFailure, expectWithin, kitSandboxConfig, type KitCheck, type KitTarget } from './kit.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A pod with one container, run through the CRI, and the v1 Pod the kit hands the prober for it. */
class ProbedPod {
  readonly uid = randomUUID();
  readonly name = `kit-probe-${this.uid.slice(0, 8)}`;
  sandboxId = '';
  containerId = '';
  readonly results: ProbeResultMessage[] = [];
  readonly events: EventMessage[] = [];
  private subs: { unsubscribe(): void }[] = [];
  constructor(private readonly t: KitTarget) {}

  pod(): Pod {
    const probe = (file: string) => ({ exec: { command: ['cat', file] }, periodSeconds: 1, failureThreshold: 1, successThreshold: 1, timeoutSeconds: 5 });
    return {
      metadata: { uid: this.uid, name: this.name, namespace: 'contract-kit' },
      spec: { containers: [{ name: 'main', image: IMAGE, readinessProbe: probe('/tmp/ready'), livenessProbe: probe('/tmp/alive') }] },
    };
  }

  async run(): Promise<void> {
    this.subs.push(
      this.t.nc.subscribe(Subjects.probeResult.wildcard(this.t.node), {
        callback: (_e, m: Msg) => {
          const r = JSON.parse(dec.decode(m.data)) as ProbeResultMessage;
          if (r.podUid === this.uid) this.results.push(r);
        },
      }),
      this.t.nc.subscribe(Subjects.events.wildcard(this.t.node), {
        callback: (_e, m: Msg) => {
          const e = JSON.parse(dec.decode(m.data)) as EventMessage;
          if (e.involvedObject.uid === this.uid) this.events.push(e);
        },
      }),
    );
    await this.t.nc.flush();
    const config = kitSandboxConfig(this.t, this.uid, this.name);
    this.sandboxId = (await this.t.cri.runtime('RunPodSandbox', { config })).podSandboxId;
    this.containerId = (
      await this.t.cri.runtime('CreateContainer', {
        podSandboxId: this.sandboxId,
        config: { metadata: { name: 'main', attempt: 0 }, image: { image: IMAGE }, command: ['sh', '-c', 'touch /tmp/alive; trap "exit 0" TERM; while true; do sleep 1; done'], labels: { [KubeletLabels.containerName]: 'main', [KubeletLabels.podUid]: this.uid, [KubeletLabels.node]: this.t.node }, logPath: 'main.log' },
        sandboxConfig: config,
      })
    ).containerId;
    await this.t.cri.runtime('StartContainer', { containerId: this.containerId });
  }

  /** The probeManager's AddPod, and the status a pod worker would send for the running container. */
  add(): void {
    this.t.nc.publish(Subjects.prober.build(this.t.node, 'AddPod'), enc.encode(JSON.stringify({ type: MessageTypes.proberCommand, pods: [this.pod()] })));
    const status = {
      phase: 'Running',
      containerStatuses: [{ name: 'main', containerID: `containerd://${this.containerId}`, image: IMAGE, imageID: '', ready: false, restartCount: 0, started: true, state: { running: { startedAt: new Date().toISOString() } } }],
    };
    this.t.nc.publish(Subjects.status.build(this.t.node, 'SetPodStatus', this.uid), enc.encode(JSON.stringify({ type: MessageTypes.statusCommand, podUid: this.uid, args: { podName: this.name, status } })));
  }

  remove(): void {
    this.t.nc.publish(Subjects.prober.build(this.t.node, 'RemovePod'), enc.encode(JSON.stringify({ type: MessageTypes.proberCommand, pods: [this.pod()] })));
  }

  exec(cmd: string): Promise<unknown> {
    return this.t.cri.runtime('ExecSync', { containerId: this.containerId, cmd: ['sh', '-c', cmd], timeout: '10' });
  }

  heard(): string {
    return this.results.length === 0 ? 'no probe_result for the pod' : this.results.map((r) => `${r.probeType} ${r.result}`).join(', ');
  }

  async stop(): Promise<void> {
    for (const s of this.subs) s.unsubscribe();
    this.remove();
    if (this.containerId) {
      await this.t.cri.runtime('StopContainer', { containerId: this.containerId, timeout: '0' }).catch(() => undefined);
      await this.t.cri.runtime('RemoveContainer', { containerId: this.containerId }).catch(() => undefined);
    }
    if (this.sandboxId) {
      await this.t.cri.runtime('StopPodSandbox', { podSandboxId: this.sandboxId }).catch(() => undefined);
      await this.t.cri.runtime('RemovePodSandbox', { podSandboxId: this.sandboxId }).catch(() => undefined);
    }
  }
}

async function record(kv: KV, node: string, uid: string, probeType: ProbeType): Promise<ProbeResultRecord | undefined> {
  const e = await kv.get(kvKey(node, probeResultKey(uid, 'main', probeType)));
  return e && e.operation === 'PUT' && e.value.length > 0 ? (JSON.parse(dec.decode(e.value)) as ProbeResultRecord) : undefined;
}

async function expectRecord(t: KitTarget, kv: KV, p: ProbedPod, probeType: ProbeType, result: string): Promise<ProbeResultRecord> {
  let last: ProbeResultRecord | undefined;
  return expectWithin(
    `probe-results ${kvKey(t.node, probeResultKey(p.uid, 'main', probeType))} = ${result} for container ${p.containerId.slice(0, 12)}`,
    async () => {
      last = await record(kv, t.node, p.uid, probeType);
      return last?.result === result && last.containerId === p.containerId ? last : undefined;
    },
    t.timeoutMs,
    () => (last ? `${last.result} for ${last.containerId.slice(0, 12)} at ${last.time}` : 'no record'),
  );
}

async function withProbedPod(t: KitTarget, fn: (p: ProbedPod, kv: KV) => Promise<void>): Promise<void> {
  const p = new ProbedPod(t);
  try {
    await p.run();
    await fn(p, await new Kvm(t.nc).open('probe-results'));
  } finally {
    await p.stop();
  }
}

/** Readiness fails until /tmp/ready exists, then succeeds: both in the record and as a probe_result. */
async function readinessTurns(t: KitTarget, p: ProbedPod, kv: KV): Promise<void> {
  await expectRecord(t, kv, p, 'readiness', 'Failure');
  await p.exec('touch /tmp/ready');
  await expectRecord(t, kv, p, 'readiness', 'Success');
  await expectWithin(`a probe_result readiness Success for container ${p.containerId.slice(0, 12)} on ${Subjects.probeResult.wildcard(t.node, 'readiness')}`, () => p.results.find((r) => r.probeType === 'readiness' && r.result === 'Success' && r.containerId === p.containerId), t.timeoutMs, () => p.heard());
}

export const PROBER_CHECKS: readonly KitCheck[] = [
  {
    name: 'readiness: Failure until the probe passes, then Success, in probe-results and as a probe_result',
    async run(t, note) {
      await withProbedPod(t, async (p, kv) => {
        p.add();
        await readinessTurns(t, p, kv);
        note(`heard: ${p.heard()}`);
      });
    },
  },
  {
    name: 'liveness: Success while it passes, Failure once it fails, as a probe_result, with an Unhealthy Warning event',
    async run(t, note) {
      await withProbedPod(t, async (p, kv) => {
        p.add();
        await expectRecord(t, kv, p, 'liveness', 'Success');
        await p.exec('rm /tmp/alive');
        await expectRecord(t, kv, p, 'liveness', 'Failure');
        await expectWithin(`a probe_result liveness Failure for container ${p.containerId.slice(0, 12)}`, () => p.results.find((r) => r.probeType === 'liveness' && r.result === 'Failure'), t.timeoutMs, () => p.heard());
        const unhealthy = await expectWithin(
          `an Unhealthy Warning event "Liveness probe failed" for pod ${p.name} on ${Subjects.events.wildcard(t.node)}`,
          () => p.events.find((e) => e.reason === 'Unhealthy' && e.eventType === 'Warning' && /^Liveness probe failed/.test(e.message)),
          t.timeoutMs,
          () => (p.events.length === 0 ? 'no event' : p.events.map((e) => `${e.eventType} ${e.reason}: ${e.message}`).join('; ')),
        );
        note(`heard: ${p.heard()}; event: ${unhealthy.message}`);
      });
    },
  },
  {
    name: 'RemovePod: its probes stop (no result written after it)',
    async run(t, note) {
      await withProbedPod(t, async (p, kv) => {
        p.add();
        const first = await expectRecord(t, kv, p, 'liveness', 'Success');
        p.remove();
        await t.nc.flush();
        await new Promise((r) => setTimeout(r, 1500));
        const removedAt = Date.now();
        await p.exec('rm /tmp/alive');
        await new Promise((r) => setTimeout(r, 4000));
        const after = await record(kv, t.node, p.uid, 'liveness');
        if (after && after.time > removedAt) throw new KitFailure(`a liveness result was written ${after.time - removedAt} ms after RemovePod (${after.result}); the probe workers of a removed pod must stop`);
        note(`last result ${after ? `${after.result} at ${after.time - first.time} ms after the first` : 'removed'}; none written in 4 s after RemovePod`);
      });
    },
  },
  {
    name: 'bad input (not JSON, a wrong type, missing fields) on its subjects: ignored, and it goes on probing',
    async run(t, note) {
      const junk = ['{not json', JSON.stringify({ type: 'kubelet.v9.unknown' }), JSON.stringify({ type: MessageTypes.proberCommand }), JSON.stringify({ type: MessageTypes.proberCommand, pods: [{ spec: 42 }] })];
      for (const j of junk) {
        t.nc.publish(Subjects.prober.build(t.node, 'AddPod'), enc.encode(j));
        t.nc.publish(Subjects.status.build(t.node, 'SetPodStatus', randomUUID()), enc.encode(j));
      }
      await t.nc.flush();
      await withProbedPod(t, async (p, kv) => {
        p.add();
        await readinessTurns(t, p, kv);
        note(`after ${junk.length * 2} bad messages: ${p.heard()}`);
      });
    },
  },
  {
    name: 'restarted: it probes again a pod it is given after it is back',
    needsRestart: true,
    async run(t, note) {
      await t.restart?.();
      await withProbedPod(t, async (p, kv) => {
        // A just-restarted prober may not be subscribed yet: the kit asks again until a result comes, as a pod worker's resync would.
        await expectWithin('a readiness record after AddPod', async () => {
          p.add();
          await new Promise((r) => setTimeout(r, 1000));
          return record(kv, t.node, p.uid, 'readiness');
        }, t.timeoutMs);
        await readinessTurns(t, p, kv);
        note(`heard: ${p.heard()}`);
      });
    },
  },
];
