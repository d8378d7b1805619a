/**
 * P1 of issue 16: manifest -> Running, and manifest -> Running and Ready, as
 * GET /pods serves them, for N hostNetwork busybox static pods one after
 * another (each waits for the previous one to be Ready), then manifest
 * removed -> the pod gone from GET /pods. A whole stack (the seven services,
 * a nats-server) on the real containerd, driven only through its public
 * contract: the manifest directory and GET /pods, polled every POLL_MS.
 * Prints a markdown table (p50, p90, p99, max in ms) and a JSON line; removes
 * every pod it made. `--trace` also prints the last pod's timeline
 * (`kubelet-split trace`) on stderr, to see where the time goes.
 *
 *   npm run build && bash deploy/runtime.sh start && flock -o /tmp/e2e.lock node dist/test/bench/pod-start.bench.js [--pods 10] [--poll-ms 5] [--trace]
 */
import { parseArgs } from 'node:util';
import type { V1PodStatus } from '@kubernetes/client-node';
import { Subjects } from '@app/contracts';
import { buildTimeline, readTraceRecords, type TraceRecord } from '@app/tracing';
import { printTimeline } from '../../apps/cli/src/trace.js';
import { NodeStack } from '../support/node-stack.js';

const { values } = parseArgs({ options: { trace: { type: 'boolean', default: false }, pods: { type: 'string', default: '10' }, 'poll-ms': { type: 'string', default: '5' }, node: { type: 'string', default: 'pod-start-bench' } } });
const PODS = Number(values.pods);
const POLL_MS = Number(values['poll-ms']);
const IMAGE = 'localhost/kubelet-split/busybox:1.35';

const manifest = (name: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]\n`;

const running = (s: V1PodStatus) => s.phase === 'Running' && (s.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
const ready = (s: V1PodStatus) => running(s) && (s.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

function pct(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

const stack = new NodeStack({ node: values.node, services: ['cri-gateway', 'pleg', 'status-manager', 'prober', 'pod-worker', 'sync-loop', 'config-source'] });
const samples: { running: number; ready: number; gone: number }[] = [];
try {
  await stack.start();
  for (let i = 0; i < PODS; i++) {
    const name = `p1-${i}`;
    const pod = stack.podName(name);
    const t0 = performance.now();
    stack.writeManifest(name, manifest(name));
    let tRunning: number | undefined;
    let tReady: number | undefined;
    const deadline = t0 + 30_000;
    while (tReady === undefined && performance.now() < deadline) {
      const s = (await stack.podList()).items.find((p) => p.metadata?.name === pod)?.status;
      const now = performance.now();
      if (s && running(s)) tRunning ??= now;
      if (s && ready(s)) tReady = now;
      if (tReady === undefined) await new Promise((r) => setTimeout(r, POLL_MS));
    }
    if (tRunning === undefined || tReady === undefined) throw new Error(`${pod} not Running and Ready within 30s`);
    if (values.trace && i === PODS - 1) {
      const uid = (await stack.podList()).items.find((p) => p.metadata?.name === pod)?.metadata?.uid ?? '';
      await new Promise((r) => setTimeout(r, 1500)); // the records are published in batches
      const records: TraceRecord[] = [];
      await readTraceRecords(stack.nc, Subjects.trace.forPod(uid), (r) => void records.push(r), { follow: false });
      process.stderr.write(printTimeline(buildTimeline(uid, records)));
    }
    const t1 = performance.now();
    stack.removeManifest(name);
    while (performance.now() < t1 + 30_000 && (await stack.podList()).items.some((p) => p.metadata?.name === pod)) await new Promise((r) => setTimeout(r, POLL_MS));
    samples.push({ running: tRunning - t0, ready: tReady - t0, gone: performance.now() - t1 });
    process.stderr.write(`${pod}: running ${Math.round(tRunning - t0)} ms, ready ${Math.round(tReady - t0)} ms, gone ${Math.round(performance.now() - t1)} ms\n`);
  }
} finally {
  await stack.stop();
}

const row = (what: string, xs: number[]) => `| ${what} | ${[50, 90, 99].map((p) => Math.round(pct(xs, p))).join(' | ')} | ${Math.round(Math.max(...xs))} |`;
const figures = { running: samples.map((s) => s.running), ready: samples.map((s) => s.ready), gone: samples.map((s) => s.gone) };
process.stdout.write(
  [
    `P1, ${PODS} hostNetwork busybox static pods one after another, GET /pods polled every ${POLL_MS} ms`,
    '',
    '| ms | p50 | p90 | p99 | max |',
    '|---|---|---|---|---|',
    row('manifest -> Running', figures.running),
    row('manifest -> Running and Ready', figures.ready),
    row('manifest removed -> gone from /pods', figures.gone),
    '',
    JSON.stringify({ pods: PODS, pollMs: POLL_MS, ...Object.fromEntries(Object.entries(figures).map(([k, xs]) => [k, { p50: pct(xs, 50), p90: pct(xs, 90), p99: pct(xs, 99), max: Math.max(...xs), samples: xs.map(Math.round) }])) }),
    '',
  ].join('\n'),
);
