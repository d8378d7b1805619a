/**
 * `npm run bench`: kubelet-split and the upstream kubelet side by side on
 * this machine, one agent at a time, with the same static manifests, each
 * seen only through its manifest directory, its `GET /pods` and its
 * runtime's CRI socket (measure.ts). Also the raw CRI floor (containerd
 * alone) and P4 (what a NATS hop to cri-gateway adds over direct gRPC).
 * Prints a markdown table; writes bench.json, bench.md and p1.svg (the P1
 * latency distributions, one line per agent) to --out.
 *
 *   npm run build && node dist/test/bench/harness/bench.js [--smoke] [--density 250] [--agents kubelet-split,kubelet-split-one-process,kubelet] [--runtimes containerd2,containerd1.6] [--out .tmp/bench]
 *   npm run bench -- --fleet [--fleet-nodes 1,2,3] [--out .tmp/bench]   the fleet's figure instead (../fleet.bench.ts): fleet.json, fleet.md
 *
 * It uses the project's containerd (deploy/runtime.sh, started here when it
 * is not running, and stopped again): run it under the e2e lock on a shared
 * machine (`flock -o /tmp/e2e.lock npm run bench`). `--runtimes` measures
 * every agent on each runtime kind in turn (deploy/runtime.sh's KS_RUNTIME:
 * containerd 2 with its event stream, Debian's containerd 1.6 without),
 * switching the project's containerd between them and leaving the kind that
 * ran before; the agents' columns then say the runtime. An agent that cannot
 * run is reported with the reason, and the others are still measured.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { VersionRequest, type VersionResponse } from '@app/cri';
import { GrpcRuntimeConnection } from '../../../apps/cri-gateway/src/adapters/grpc-runtime-connection.js';
import { REPO_ROOT } from '../../../deploy/local/stack.js';
import { runtimeAddress, runtimeKind, useRuntimeKind, type RuntimeKind } from '../../support/runtime.js';
import type { Agent } from './agent.js';
import { KubeletSplitAgent } from './kubelet-split-agent.js';
import { measureAgent, measureFloor, type MeasureOptions } from './measure.js';
import { measureNatsHop } from './nats-hop.js';
import { markdownTable, p1Chart, type AgentResult, type BenchResult } from './report.js';

/** The agents `--agents` may name, in the order they run. */
export const AGENT_NAMES = ['kubelet-split', 'kubelet-split-one-process', 'kubelet'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

// The stack runs what the launcher and the image run: the bundles, without source maps (the tests'
// default, tsc's output with source maps, costs about 25 MB more per process). KS_ENTRY=dist measures that.
process.env['KS_ENTRY'] ??= 'bundle';

const { values: args } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    agents: { type: 'string' },
    out: { type: 'string', default: join(REPO_ROOT, '.tmp', 'bench') },
    'p1-pods': { type: 'string' },
    'p2-pods': { type: 'string' },
    'p3-seconds': { type: 'string' },
    'p7-kills': { type: 'string' },
    density: { type: 'string' },
    runtimes: { type: 'string' },
    fleet: { type: 'boolean', default: false },
    'fleet-nodes': { type: 'string', default: '1,2,3' },
  },
});
const smoke = args.smoke === true;
const int = (v: string | undefined, full: number, small: number) => (v === undefined ? (smoke ? small : full) : Number(v));
const settings: BenchResult['settings'] & { p7Kills: number; densityPods: number } = {
  p1Pods: int(args['p1-pods'], 30, 3),
  p2Pods: int(args['p2-pods'], 100, 3),
  p3Seconds: int(args['p3-seconds'], 30, 5),
  p6Pods: int(args['p2-pods'], 100, 3),
  p7Kills: int(args['p7-kills'], 10, 2),
  densityPods: int(args.density, 250, 5),
  pollMs: { p1: 20, p2: 100, p6: 20 },
};
const agentNames = (args.agents ?? AGENT_NAMES.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
for (const a of agentNames) {
  if (!(AGENT_NAMES as readonly string[]).includes(a)) {
    process.stderr.write(`bench: unknown agent "${a}" (known: ${AGENT_NAMES.join(', ')})\n`);
    process.exit(2);
  }
}
const RUNTIME_KINDS = ['containerd2', 'containerd1.6'] as const;
const runtimeKinds = args.runtimes === undefined ? [] : args.runtimes.split(',').map((s) => s.trim()).filter(Boolean);
for (const k of runtimeKinds) {
  if (!(RUNTIME_KINDS as readonly string[]).includes(k)) {
    process.stderr.write(`bench: unknown runtime "${k}" in --runtimes (known: ${RUNTIME_KINDS.join(', ')})\n`);
    process.exit(2);
  }
}
if (!Number.isInteger(settings.densityPods) || settings.densityPods < 0) {
  process.stderr.write(`bench: --density takes a number of pods (0: no density figures), got "${args.density}"\n`);
  process.exit(2);
}
/** Every agent admits the most pods a phase runs at once (the kubelet's default, 110, or the density figures'). */
const maxPods = Math.max(110, settings.p2Pods, settings.densityPods);
if (settings.p7Kills > settings.p2Pods) {
  process.stderr.write(`bench: --p7-kills ${settings.p7Kills} is more than the ${settings.p2Pods} pods P2 starts (--p2-pods)\n`);
  process.exit(2);
}
const out = resolve(args.out ?? '.tmp/bench');
const log = (line: string) => process.stderr.write(`bench ${new Date().toISOString().slice(11, 19)} ${line}\n`);

if (args.fleet) {
  const nodeCounts = (args['fleet-nodes'] ?? '').split(',').map((s) => Number(s.trim()));
  if (nodeCounts.length === 0 || nodeCounts.some((n) => !Number.isInteger(n) || n < 1 || n > 100)) {
    process.stderr.write(`bench: --fleet-nodes takes node counts from 1 to 100, comma-separated, got "${args['fleet-nodes']}"\n`);
    process.exit(2);
  }
  const { runFleetBench } = await import('../fleet.bench.js');
  const table = await runFleetBench({ nodeCounts, out, settleSeconds: 20, idleSeconds: 30, podsPerNode: 10, log });
  process.stdout.write(`${table}\nwrote ${join(out, 'fleet.json')} and fleet.md\n`);
} else {
  await nodeFigures();
}

/** The node figures (the file's header): the raw CRI floor, P4, then each agent; on each runtime of --runtimes in turn. */
async function nodeFigures(): Promise<void> {
  async function agentFor(name: AgentName): Promise<Agent> {
    switch (name) {
      case 'kubelet-split':
        return new KubeletSplitAgent(`ks-bench-${process.pid}`, 'split', maxPods);
      case 'kubelet-split-one-process':
        return new KubeletSplitAgent(`ks-bench-${process.pid}-one`, 'one-process', maxPods);
      case 'kubelet': {
        const { UpstreamKubeletAgent } = await import('./kubelet-agent.js');
        return UpstreamKubeletAgent.create(log, maxPods);
      }
    }
  }

  const measureOptions: MeasureOptions = { ...settings, p5Runs: smoke ? 1 : 3, log };
  const startedAt = new Date().toISOString();
  const kinds = (runtimeKinds.length > 0 ? runtimeKinds : [runtimeKind()]) as RuntimeKind[];
  let current: Agent | undefined;
  // Each kind's useRuntimeKind leaves the runtime as that round found it, so the first round's restore leaves it as the run found it.
  const restores: (() => void)[] = [];
  const restore = () => {
    for (const r of restores.splice(0).reverse()) r();
  };

  async function onSignal(signal: string) {
    log(`${signal}: stopping`);
    await current?.stop().catch(() => undefined);
    restore();
    process.exit(130);
  }
  process.once('SIGINT', () => void onSignal('SIGINT'));
  process.once('SIGTERM', () => void onSignal('SIGTERM'));

  const git = (...a: string[]) => spawnSync('git', ['-C', REPO_ROOT, ...a], { encoding: 'utf8' });
  const result: BenchResult = {
    commit: `${git('rev-parse', 'HEAD').stdout.trim() || 'unknown'}${git('status', '--porcelain', '--untracked-files=no').stdout.trim() ? '+dirty' : ''}`,
    startedAt,
    finishedAt: '',
    smoke,
    machine: { cpus: cpus().length, node: process.version, kernel: release(), loadavg: { start: loadavg(), end: [] }, containerd: '' },
    settings,
    floor: { error: 'not measured' },
    p4: { error: 'not measured' },
    agents: {},
  };

  try {
    for (const [k, kind] of kinds.entries()) {
      restores.push(useRuntimeKind(kind, log));
      const address = runtimeAddress();
      const version = await runtimeVersion(address);
      result.machine.containerd = [result.machine.containerd, kinds.length > 1 ? `${version} (${kind})` : version].filter(Boolean).join(', ');
      if (k === 0) {
        log(`raw CRI floor on ${address} (${kind} ${version})`);
        try {
          result.floor = await measureFloor(`unix://${address}`, settings.p1Pods, settings.p2Pods, 4);
        } catch (err) {
          result.floor = { error: (err as Error).message };
        }
        log('P4: the NATS hop to cri-gateway against direct gRPC');
        try {
          const { calls, rows } = await measureNatsHop(address, smoke ? 200 : 1000);
          result.p4 = { calls, rows };
        } catch (err) {
          result.p4 = { error: (err as Error).message };
        }
      }

      for (const name of agentNames as AgentName[]) {
        const key = kinds.length > 1 ? `${name} @${kind}` : name;
        let r: AgentResult;
        try {
          log(`${key}: starting`);
          current = await agentFor(name);
          const coldStart = await current.start();
          r = { ok: true, ...(await measureAgent(current, coldStart, measureOptions)) };
          r.description += ` (runtime ${kind}, containerd ${version})`;
        } catch (err) {
          r = { ok: false, reason: (err as Error).message };
          log(`${key}: ${r.reason}`);
        }
        try {
          await current?.stop();
        } catch (err) {
          if (r.ok) r = { ok: false, reason: `stopping it failed: ${(err as Error).message}` };
        }
        current = undefined;
        result.agents[key] = r;
      }
    }
  } finally {
    restore();
  }

  result.finishedAt = new Date().toISOString();
  result.machine.loadavg.end = loadavg();
  mkdirSync(out, { recursive: true });
  const table = markdownTable(result);
  writeFileSync(join(out, 'bench.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(out, 'bench.md'), table);
  writeFileSync(join(out, 'p1.svg'), p1Chart(result));
  process.stdout.write(`${table}\nwrote ${join(out, 'bench.json')}, bench.md and p1.svg\n`);
}

/** The runtime's own version (CRI Version: containerd's runtimeVersion, `v2.4.2`, `1.6.20~ds1`). */
async function runtimeVersion(address: string): Promise<string> {
  const conn = new GrpcRuntimeConnection(`unix://${address}`);
  try {
    const v = (await conn.unary('runtime', 'Version', VersionRequest.fromPartial({}), 10_000)) as VersionResponse;
    return v.runtimeVersion;
  } catch (err) {
    return `unknown (${(err as Error).message})`;
  } finally {
    conn.close();
  }
}
