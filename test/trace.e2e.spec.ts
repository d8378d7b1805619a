/**
 * Causal tracing end to end (issue 15, docs/adr/0015-tracing.md): a static
 * pod started on the real stack has trace records in KUBELET_TRACES whose
 * hops cover every service on its way to Running, each after its cause,
 * with non-negative durations; the trace up to the Running status spans the
 * pod's start latency as the test measures it on the wire; and the records
 * survive a restart of a service. With `--nats-trace` (nats-server 2.11 or
 * later, deploy/nats/build.sh), the CLI shows for the pod's hops the
 * service instances the server routes each subject to, and no service
 * receives the trace-only copies it sends.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Subjects, type PodUpdateMessage, type StatusCommandMessage } from '@app/contracts';
import { NodeStack } from './support/node-stack.js';
import { buildTimeline, readTraceRecords, type TraceRecord } from '@app/tracing';
import type { HopServerView } from '../apps/cli/src/nats-trace.js';
import { REPO_ROOT } from '../deploy/local/stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const dec = new TextDecoder();
const SERVICES = ['config-source', 'sync-loop', 'pod-worker', 'cri-gateway', 'pleg', 'status-manager'] as const;

describe('a pod\'s trace across services', { timeout: 300_000 }, () => {
  const stack = new NodeStack({ node: 'trace-e2e', services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'prober', 'config-source'] });
  before(() => stack.start());
  after(() => stack.stop());

  /** The CLI's arguments against this stack, as its admin. */
  const cliArgs = (...args: string[]) => [join(REPO_ROOT, 'dist', 'apps', 'cli', 'src', 'cli.js'), ...args, '--server', stack.api, '--nats', stack.nats.url, '--nats-password-file', stack.nats.credentials.passwordFile('admin')];

  async function records(uid: string): Promise<TraceRecord[]> {
    const out: TraceRecord[] = [];
    await readTraceRecords(stack.nc, Subjects.trace.forPod(uid), (r) => void out.push(r), { follow: false });
    return out;
  }

  it('covers the pod\'s way to Running, in causal order, spanning its start latency; and survives a restart', async () => {
    const name = stack.podName('traced');
    let seenAt: number | undefined;
    let runningAt: number | undefined;
    stack.nc.subscribe('kubelet.trace-e2e.config.*', {
      callback: (_e, m) => {
        const body = JSON.parse(dec.decode(m.data)) as PodUpdateMessage;
        if (seenAt === undefined && body.pods?.some((p) => p.metadata.name === name)) seenAt = Date.now();
      },
    });
    stack.nc.subscribe('kubelet.trace-e2e.status.*.*', {
      callback: (_e, m) => {
        const body = JSON.parse(dec.decode(m.data)) as StatusCommandMessage;
        const status = body.args['status'] as { phase?: string } | undefined;
        if (runningAt === undefined && body.args['podName'] === name && status?.phase === 'Running') runningAt = Date.now();
      },
    });
    await stack.nc.flush();
    stack.writeManifest('traced', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: traced\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`);
    await stack.waitForPod('traced', 'Running', (s) => s.phase === 'Running', 60_000);
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === name)?.metadata?.uid ?? '';
    assert.ok(uid, 'the pod has a UID');
    assert.ok(seenAt !== undefined && runningAt !== undefined, 'the test saw the pod config and its Running status on the wire');
    const startLatency = runningAt - seenAt;

    // The records are published in batches off the hot path, each service's in batches of its own (50 ms): the wait
    // ends on what the assertions below look for (the Running status, every service, and the hops they name), not on
    // the pod worker's Running status alone, which can be flushed before the PLEG's ContainerStarted hop.
    const isRunningHop = (r: TraceRecord) => r.kind === 'publish' && r.subject?.startsWith('kubelet.trace-e2e.status.') === true && r.detail?.['phase'] === 'Running';
    const sandboxHop = (r: TraceRecord) => r.instance.startsWith('cri-gateway@') && r.kind === 'handle' && r.subject?.endsWith('.RunPodSandbox') === true;
    const plegStartedHop = (r: TraceRecord) => r.instance.startsWith('pleg@') && r.detail?.['eventType'] === 'ContainerStarted';
    const startContainerHop = (r: TraceRecord) => r.kind === 'cri' && r.method === 'StartContainer';
    const all = await stack.waitFor('the Running status, every service and the hops looked for among the trace records', async () => {
      const rs = await records(uid);
      const by = new Set(rs.map((r) => r.instance.split('@')[0]));
      return rs.some(isRunningHop) && SERVICES.every((s) => by.has(s)) && rs.some(sandboxHop) && rs.some(plegStartedHop) && rs.some(startContainerHop) ? rs : undefined;
    }, 10_000);

    for (const r of all) {
      assert.ok(r.durationMs >= 0, `${r.kind} ${r.subject ?? ''} has a non-negative duration`);
      assert.equal(r.podUid, uid);
    }
    // Every hop after its cause: a recorded parent started no later than the hop, and the timeline lists it first.
    const timeline = buildTimeline(uid, all);
    const position = new Map(timeline.hops.map((h, i) => [h.spanId, i]));
    const bySpan = new Map(all.map((r) => [r.spanId, r]));
    let linked = 0;
    for (const h of timeline.hops) {
      const parent = h.parentSpanId ? bySpan.get(h.parentSpanId) : undefined;
      if (!parent) continue;
      linked++;
      assert.ok(parent.at <= h.at, `${h.what} by ${h.instance} starts after its cause ${describeRecord(parent)}`);
      assert.ok((position.get(parent.spanId) ?? 0) < (position.get(h.spanId) ?? 0), `${h.what} is listed after its cause`);
    }
    assert.ok(linked >= all.length / 2, `most hops are linked to their cause (${linked} of ${all.length})`);

    // Every service on the pod's way to Running did a hop of it.
    const services = new Set(all.map((r) => r.instance.split('@')[0]));
    assert.deepEqual(SERVICES.filter((s) => !services.has(s)), [], `hops by ${[...services].join(', ')}`);
    // config -> sync-loop -> pod-worker -> cri-gateway: one causal chain, from the config publish to a CRI call answered.
    const chain = causesOf(all.find(sandboxHop), bySpan);
    assert.deepEqual(
      [...new Set(chain.map((r) => r.instance.split('@')[0]))],
      ['config-source', 'sync-loop', 'pod-worker', 'cri-gateway'],
      `the sandbox's chain: ${chain.map(describeRecord).join(' -> ')}`,
    );
    assert.ok(all.some(plegStartedHop), 'the PLEG event of the container start is a hop');
    assert.ok(all.some(startContainerHop), 'the CRI StartContainer call is a hop, with its method');

    // The trace up to the Running status spans the start latency measured on the wire, within 10 %.
    const running = all.filter(isRunningHop).sort((a, b) => a.at - b.at)[0];
    assert.ok(running);
    const upToRunning = buildTimeline(uid, all.filter((r) => r.at <= running.at));
    assert.ok(Math.abs(upToRunning.totalMs - startLatency) <= 0.1 * startLatency, `trace total ${upToRunning.totalMs}ms vs start latency ${startLatency}ms`);

    // A watcher's hop is linked to the KV write it saw (a KV entry carries no headers: by bucket, key and revision).
    const watched = timeline.hops.filter((h) => h.kind === 'kv.watch' && h.parentSpanId !== undefined);
    assert.ok(watched.length > 0, `a KV watch linked to its write: ${timeline.hops.filter((h) => h.kind.startsWith('kv.')).map((h) => `${h.what} by ${h.instance}`).join('; ')}`);
    for (const w of watched) {
      const put = bySpan.get(w.parentSpanId ?? '');
      assert.deepEqual([put?.kind, put?.bucket, put?.key, put?.revision], ['kv.put', w.bucket, w.key, w.revision]);
    }

    // The records are in JetStream: a restart of any one service takes none of them away, and
    // `kubelet-split trace` still reads the whole timeline after each.
    for (const service of ['status-manager', 'config-source', 'sync-loop', 'pod-worker', 'pleg', 'prober', 'cri-gateway'] as const) {
      const proc = stack.procs.get(`${service}#0`);
      assert.ok(proc, service);
      await proc.stop(10_000);
      await stack.startService(service, '0');
      const afterRestart = await records(uid);
      const spans = new Set(afterRestart.map((r) => r.spanId));
      assert.deepEqual(all.filter((r) => !spans.has(r.spanId)).map(describeRecord), [], `no record lost across the restart of ${service}`);
    }
    const { stdout } = await promisify(execFile)(process.execPath, cliArgs('trace', name, '-o', 'json'), { encoding: 'utf8', timeout: 30_000 });
    const printed = JSON.parse(stdout) as { hops: { spanId: string }[] };
    const printedSpans = new Set(printed.hops.map((h) => h.spanId));
    assert.deepEqual(all.filter((r) => !printedSpans.has(r.spanId)).map(describeRecord), [], 'trace POD prints every hop after the restarts');

    // And the restarted services record the next pod's way as before.
    stack.writeManifest('after-restarts', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: after-restarts\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`);
    await stack.waitForPod('after-restarts', 'Running', (s) => s.phase === 'Running', 60_000);
    const next = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('after-restarts'))?.metadata?.uid ?? '';
    // As above: the pod worker's StartContainer hop can be in a later batch than its first record of the pod.
    const nextRecords = await stack.waitFor('every service and the StartContainer hop among the next pod\'s records', async () => {
      const rs = await records(next);
      const by = new Set(rs.map((r) => r.instance.split('@')[0]));
      return SERVICES.every((s) => by.has(s)) && rs.some(startContainerHop) ? rs : undefined;
    }, 15_000);
    assert.ok(nextRecords.some(startContainerHop));
  });

  it('trace --nats-trace shows the instances nats-server routes each hop to, and delivers none of its probes', async () => {
    const name = stack.podName('probed');
    stack.writeManifest('probed', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: probed\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 2\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`);
    await stack.waitForPod('probed', 'Running', (s) => s.phase === 'Running', 60_000);
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === name)?.metadata?.uid ?? '';
    assert.ok(uid, 'the pod has a UID');
    await stack.waitFor('the sandbox among the trace records', async () => ((await records(uid)).some((r) => r.kind === 'cri' && r.method === 'StartContainer') ? true : undefined), 10_000);

    // A probe delivered anywhere would reach this catch-all subscription too, still carrying its trace headers.
    const delivered: string[] = [];
    const watch = [`kubelet.trace-e2e.>`, `cri.trace-e2e.>`, '$KV.>'].map((subject) =>
      stack.nc.subscribe(subject, { callback: (_e, m) => void (m.headers?.get('Nats-Trace-Only') ? delivered.push(m.subject) : undefined) }),
    );
    await stack.nc.flush();
    const { stdout } = await promisify(execFile)(process.execPath, cliArgs('trace', name, '--nats-trace', '-o', 'json'), { encoding: 'utf8', timeout: 30_000 });
    let out: { server: string; natsTrace: HopServerView[] };
    try {
      out = JSON.parse(stdout) as typeof out;
    } catch (err) {
      const at = Number(/position (\d+)/.exec((err as Error).message)?.[1] ?? 0);
      throw new Error(`trace -o json printed no JSON (${(err as Error).message}), ${stdout.length} characters; around it: ${JSON.stringify(stdout.slice(Math.max(0, at - 300), at + 300))}`);
    }
    assert.match(out.server, /^nats-server 2\.(1[1-9]|[2-9]\d)\./, 'the stack runs a nats-server with message tracing (deploy/nats/build.sh)');

    // The instances each hop goes to (this test's own catch-all subscription, `e2e-test`, left out).
    const routedTo = (pred: (subject: string) => boolean) =>
      [...new Set(out.natsTrace.filter((r) => pred(r.subject)).flatMap((r) => r.server?.egress.filter((e) => e.name !== 'e2e-test').map((e) => `${e.name.split('#')[0]} ${e.queue ?? ''}`.trim()) ?? []))].sort();
    assert.ok(out.natsTrace.length > 0 && out.natsTrace.every((r) => r.server), `every hop has a trace event: ${out.natsTrace.filter((r) => !r.server).map((r) => r.subject).join(', ')}`);
    const work = routedTo((s) => s.startsWith('kubelet.trace-e2e.work.') && !s.includes('.work.done.'));
    assert.deepEqual(work, ['pod-worker@trace-e2e'], 'work goes to the one pod worker owning its shard, in no queue group');
    assert.ok(routedTo((s) => s === 'cri.trace-e2e.runtime.RunPodSandbox').includes('cri-gateway@trace-e2e cri-gateway'), `RunPodSandbox goes to the CRI gateway's queue group: ${JSON.stringify(out.natsTrace.filter((r) => r.subject.endsWith('RunPodSandbox')))}`);
    assert.ok(routedTo((s) => s.startsWith('kubelet.trace-e2e.config.')).some((c) => c.startsWith('sync-loop@trace-e2e')), 'the pod config goes to the sync loop');
    const kv = out.natsTrace.find((r) => r.subject.startsWith('$KV.'));
    assert.ok(kv?.server?.streams.some((s) => s.stream.startsWith('KV_')), `a KV write is shown with its stream: ${JSON.stringify(kv)}`);

    await stack.nc.flush();
    await new Promise((r) => setTimeout(r, 500));
    for (const sub of watch) sub.unsubscribe();
    assert.deepEqual(delivered, [], 'no trace-only probe was delivered');
    assert.equal((await stack.podList()).items.find((p) => p.metadata?.name === name)?.status?.phase, 'Running', 'the pod is untouched');
  });
});

function describeRecord(r: TraceRecord): string {
  return `${r.kind} ${r.method ?? r.subject ?? r.key ?? ''} by ${r.instance}`;
}

/** The hop and its recorded causes, the first cause first. */
function causesOf(r: TraceRecord | undefined, bySpan: Map<string, TraceRecord>): TraceRecord[] {
  const out: TraceRecord[] = [];
  for (let h = r; h && out.length < 50; h = h.parentSpanId ? bySpan.get(h.parentSpanId) : undefined) out.unshift(h);
  return out;
}
