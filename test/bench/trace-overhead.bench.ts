/**
 * What recording trace hops costs a pod's start (issue 15: on stays within
 * 5 % of off), and how much of KUBELET_TRACES a pod takes.
 *
 * Starts the seven services on the real containerd and nats-server with
 * TRACING=off, then with TRACING=on, in alternating rounds (so that drift in
 * the machine's load falls on both), each round starting P hostNetwork
 * busybox static pods one after another. A pod's start latency is from its
 * manifest written to the pod Running and Ready in the status manager's
 * `GET /pods` (polled every 20 ms), the public contract. With tracing on, the
 * stream's bytes and records are read before the first pod and after the
 * last one's records have landed, and given per 100 pods started.
 *
 *   npm run build && bash deploy/runtime.sh start && node dist/test/bench/trace-overhead.bench.js [--pods 15] [--rounds 2] [--json out.json]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { TRACE_STREAM } from '@app/tracing';
import { NodeStack } from '../support/node-stack.js';

const { values } = parseArgs({ options: { pods: { type: 'string', default: '15' }, rounds: { type: 'string', default: '2' }, json: { type: 'string' } } });
const PODS = Number(values.pods);
const ROUNDS = Number(values.rounds);
const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const SERVICES = ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'prober', 'config-source'] as const;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] ?? NaN;

interface Round {
  latenciesMs: number[];
  streamBytes?: number;
  streamRecords?: number;
}

async function streamState(stack: NodeStack): Promise<{ bytes: number; messages: number }> {
  const jsm = await jetstreamManager(stack.nc);
  try {
    const s = (await jsm.streams.info(TRACE_STREAM)).state;
    return { bytes: s.bytes, messages: s.messages };
  } catch {
    return { bytes: 0, messages: 0 };
  }
}

async function round(tracing: 'on' | 'off', n: number): Promise<Round> {
  const node = `trace-bench-${tracing}-${n}`;
  const env = Object.fromEntries(SERVICES.map((s) => [s, { TRACING: tracing }]));
  const stack = new NodeStack({ node, services: [...SERVICES], env });
  await stack.start();
  try {
    const before = await streamState(stack);
    const latenciesMs: number[] = [];
    for (let i = 0; i < PODS; i++) {
      const name = `p${i}`;
      const t0 = performance.now();
      stack.writeManifest(name, `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sleep", "3600"]\n`);
      const pod = stack.podName(name);
      for (;;) {
        const s = (await stack.podList()).items.find((p) => p.metadata?.name === pod)?.status;
        if (s?.phase === 'Running' && s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
        if (performance.now() - t0 > 60_000) throw new Error(`${pod} not Running and Ready within 60 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
      latenciesMs.push(performance.now() - t0);
    }
    if (tracing === 'off') return { latenciesMs };
    // The last records are published in batches: wait until the stream stops growing.
    let last = await streamState(stack);
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = await streamState(stack);
      if (now.messages === last.messages) break;
      last = now;
    }
    return { latenciesMs, streamBytes: last.bytes - before.bytes, streamRecords: last.messages - before.messages };
  } finally {
    await stack.stop();
  }
}

const runs: Record<'on' | 'off', Round[]> = { on: [], off: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
    runs[mode].push(await round(mode, r));
    process.stderr.write(`round ${r} TRACING=${mode}: ${runs[mode].at(-1)?.latenciesMs.map((x) => x.toFixed(0)).join(' ')} ms\n`);
  }
}

const summary = (mode: 'on' | 'off') => {
  const xs = runs[mode].flatMap((r) => r.latenciesMs);
  return { pods: xs.length, p50: pct(xs, 50), p90: pct(xs, 90), p99: pct(xs, 99), mean: xs.reduce((a, b) => a + b, 0) / xs.length };
};
const off = summary('off');
const on = summary('on');
const bytes = runs.on.reduce((a, r) => a + (r.streamBytes ?? 0), 0);
const records = runs.on.reduce((a, r) => a + (r.streamRecords ?? 0), 0);
const per100 = { bytes: Math.round((bytes / on.pods) * 100), records: Math.round((records / on.pods) * 100) };
const f = (x: number) => x.toFixed(0);
const delta = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(1)} %`;
console.log(`| TRACING | pods | p50 ms | p90 ms | p99 ms | mean ms |`);
console.log(`|---|---|---|---|---|---|`);
console.log(`| off | ${off.pods} | ${f(off.p50)} | ${f(off.p90)} | ${f(off.p99)} | ${f(off.mean)} |`);
console.log(`| on | ${on.pods} | ${f(on.p50)} | ${f(on.p90)} | ${f(on.p99)} | ${f(on.mean)} |`);
console.log(`| on vs off | | ${delta(on.p50, off.p50)} | ${delta(on.p90, off.p90)} | ${delta(on.p99, off.p99)} | ${delta(on.mean, off.mean)} |`);
console.log(`\nKUBELET_TRACES per 100 pods started: ${(per100.bytes / 1024).toFixed(0)} KiB, ${per100.records} records (${(bytes / Math.max(records, 1)).toFixed(0)} bytes per record as stored)`);
if (values.json) writeFileSync(values.json, JSON.stringify({ off, on, per100, runs }, null, 2));
