/**
 * A pod-worker replica whose event loop stalls past its shard lease does not
 * act on the shard once it runs again (issue 28 item 8), as a deposed
 * leader does not (docs/adr/0011): two replicas on the real containerd; the
 * owner of a pod's shard is stopped (SIGSTOP) in the middle of the pod's
 * sync, while the first container's postStart hook runs (the hook then
 * fails, which makes a kubelet kill the container); the other replica takes
 * the shard over and runs the pod; the stalled one is continued (SIGCONT).
 * What a user would check: no CRI call that changes the runtime, and no
 * status or work-done, comes from the stalled replica for the pod after
 * another took its shard (each message on NATS names its sender), and the
 * pod's first container still runs, never restarted. The calls seen are
 * printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Msg } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { Subjects, shardOf } from '@app/contracts';
import { KubeletLabels } from '@app/kube';
import { Headers } from '@app/tracing';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const SHARDS = 4;
const LEASE_MS = 6000;
/** The CRI calls that change the runtime (the reads a stale replica may make are harmless). */
const MUTATING = new Set(['RunPodSandbox', 'StopPodSandbox', 'RemovePodSandbox', 'CreateContainer', 'StartContainer', 'StopContainer', 'RemoveContainer', 'UpdateContainerResources', 'ExecSync']);
/**
 * How long the test watches the continued replica after it has answered
 * HTTP again (its event loop ran its timers and its buffered messages): its
 * step in flight goes on at once (the hook's reply is waiting in its
 * socket); measured under 0.2 s before the fence. A generous window.
 */
const WATCH_MS = 5000;

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: stalled
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
    - name: first
      image: ${IMAGE}
      command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
      lifecycle:
        postStart:
          exec:
            command: ["sh", "-c", "sleep 4; exit 1"]
    - name: second
      image: ${IMAGE}
      command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

describe('a pod-worker replica stalled past its shard lease does not act on the shard when it runs again', { timeout: 300_000 }, () => {
  const stack = new NodeStack({
    node: 'sf-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'config-source'],
    env: { 'pod-worker': { SHARD_LEASE_DURATION: `${LEASE_MS}ms`, POD_WORKER_SHARDS: String(SHARDS) } },
  });
  /** Every message a pod worker sent in the pod's name or to the runtime: when (wall clock, ms), from whom, what. */
  const sent: { at: number; by: string; what: string }[] = [];
  /**
   * Every shard lease the `leases` bucket stored: when the server stored it
   * (its own timestamp, on this machine's clock), the shard, its owner. A
   * write that failed its compare-and-set (a stale renewal) is not stored,
   * so it is not here.
   */
  const leases: { storedAt: number; shard: number; owner: string }[] = [];

  const replicas = () => [...stack.procs.entries()].filter(([k]) => k.startsWith('pod-worker'));
  async function shardsOf(key: string): Promise<number[]> {
    const sp = stack.procs.get(key);
    assert.ok(sp);
    return ((await (await fetch(`http://127.0.0.1:${sp.port}/workers`)).json()) as { shards: number[] }).shards;
  }

  before(async () => {
    await stack.start();
    const note = (what: (m: Msg) => string | undefined) => (_e: unknown, m: Msg) => {
      const by = m.headers?.get(Headers.sender) ?? '';
      const w = by.startsWith('pod-worker') ? what(m) : undefined;
      if (w) sent.push({ at: Date.now(), by, what: w });
    };
    const node = stack.options.node;
    stack.nc.subscribe(Subjects.criRuntime.wildcard(node), { callback: note((m) => { const method = Subjects.criRuntime.parse(m.subject)?.method ?? ''; return MUTATING.has(method) ? `CRI ${method}` : undefined; }) });
    stack.nc.subscribe(`kubelet.${node}.status.*.*`, { callback: note((m) => `status ${m.subject.split('.').slice(3).join('.')}`) });
    stack.nc.subscribe(Subjects.workDone.wildcard(node), { callback: note((m) => `work done ${m.subject.split('.').at(-1) ?? ''}`) });
    const kv = await new Kvm(stack.nc).open('leases');
    const watch = await kv.watch({ key: `${node}.pod-worker-shard.*`, include: 'updates' });
    void (async () => {
      const dec = new TextDecoder();
      for await (const e of watch) {
        if (e.operation !== 'PUT' || e.value.length === 0) continue;
        const owner = (JSON.parse(dec.decode(e.value)) as { owner?: string }).owner ?? '';
        leases.push({ storedAt: e.created.getTime(), shard: Number(e.key.split('.').at(-1)), owner });
      }
    })();
    stopWatch = () => watch.stop();
    await stack.nc.flush();
    await stack.startService('pod-worker', '0');
    await stack.startService('pod-worker', '1');
    await stack.waitFor('the two replicas to share the shards', async () => ((await shardsOf('pod-worker#0')).length === 2 && (await shardsOf('pod-worker#1')).length === 2 ? true : undefined), 4 * LEASE_MS);
  });
  let stopWatch = () => {};
  after(async () => {
    stopWatch();
    // A replica left stopped would hang the stack's stop.
    for (const [, sp] of replicas()) sp.process.kill('SIGCONT');
    await stack.stop();
  });

  it('after SIGSTOP past its lease and SIGCONT, the stalled replica sends nothing for the pod, and the pod keeps its first container', async () => {
    stack.writeManifest('stalled', POD);
    const first = await stack.waitFor('stalled\'s first container to run (its postStart hook now runs)', async () => (await stack.containers('stalled')).find((c) => c.metadata?.name === 'first' && c.state === 'CONTAINER_RUNNING'), 60_000);
    const uid = first.labels[KubeletLabels.podUid] ?? '';
    const shard = shardOf(uid, SHARDS);
    const [owner, other] = (await shardsOf('pod-worker#0')).includes(shard) ? ['pod-worker#0', 'pod-worker#1'] : ['pod-worker#1', 'pod-worker#0'];
    const stalled = stack.procs.get(owner);
    assert.ok(stalled);
    // Stopped once the hook's ExecSync has left it: stopped between the fence's check and the write to its socket, the
    // request would go out when it runs again (a call in flight past the lease: docs/adr/0028, what it does not guarantee).
    const ownerInstance = `#${owner.split('#')[1] ?? ''}`;
    await stack.waitFor(`${owner} to send the postStart hook's ExecSync`, () => (sent.some((s) => s.by.endsWith(ownerInstance) && s.what === 'CRI ExecSync') ? true : undefined), 30_000);
    stalled.process.kill('SIGSTOP');
    const stoppedAt = performance.now();
    console.log(`# ${owner} (owner of shard ${shard}) stopped while the postStart hook of ${first.id.slice(0, 12)} runs`);

    await stack.waitFor(`${other} to take shard ${shard} over`, async () => ((await shardsOf(other)).includes(shard) ? true : undefined), 4 * LEASE_MS);
    console.log(`# ${other} took shard ${shard} ${Math.round(performance.now() - stoppedAt)} ms after the owner stalled`);
    await stack.waitFor('the new owner to run the pod\'s second container', async () => ((await stack.containers('stalled')).some((c) => c.metadata?.name === 'second' && c.state === 'CONTAINER_RUNNING') ? true : undefined), 60_000);

    const continuedAt = Date.now();
    stalled.process.kill('SIGCONT');
    // It answers again once its event loop has run what was due and what was waiting in its socket.
    await stack.waitFor(`${owner} to answer again`, () => shardsOf(owner).then(() => true), 30_000);
    const answeredAt = Date.now();
    await new Promise((r) => setTimeout(r, WATCH_MS));
    // A shard the rebalancing hands back to it is its own again from the moment the server stored that lease: a
    // message it sent after that reaches this test after that moment (it waited for the write's acknowledgement).
    const instance = `#${owner.split('#')[1] ?? ''}`;
    const ownAgainAt = leases.find((l) => l.shard === shard && l.owner.endsWith(instance) && l.storedAt >= continuedAt)?.storedAt ?? Infinity;
    const stale = sent.filter((s) => s.by.endsWith(instance) && s.at >= continuedAt && s.at < Math.min(ownAgainAt, answeredAt + WATCH_MS));
    for (const s of stale) console.log(`# ${s.at - continuedAt} ms after SIGCONT, ${s.by} sent ${s.what}`);
    const later = sent.filter((s) => s.by.endsWith(instance) && s.at >= ownAgainAt).length;
    console.log(`# the stalled replica answered ${answeredAt - continuedAt} ms after SIGCONT${ownAgainAt < Infinity ? `, was given shard ${shard} back ${ownAgainAt - continuedAt} ms after it (and sent ${later} message(s) for it from then on, as its owner)` : ''}; it sent ${stale.length} message(s) that change the runtime or speak for the pod before that`);

    const firsts = (await stack.containers('stalled')).filter((c) => c.metadata?.name === 'first');
    console.log(`# the pod's first container: ${firsts.map((c) => `${c.id.slice(0, 12)} attempt ${c.metadata?.attempt ?? 0} ${c.state}`).join(', ')}`);
    assert.deepEqual(stale.map((s) => s.what), [], 'nothing from the stalled replica after another took its shard');
    assert.deepEqual(firsts.map((c) => [c.id, c.state]), [[first.id, 'CONTAINER_RUNNING']], 'the first container is the one that ran before the stall, still running');
  });
});
