/**
 * `npm run bench` in its smoke mode (3 pods, 5 s of footprint, 5 for the
 * density figures), as a user runs it, against the real stack and
 * containerd: it exits 0 within four minutes and its JSON has every figure
 * (raw CRI floor, P1 to P7, the density figures) with
 * finite numbers, its markdown table a row per figure, and its chart a line
 * per agent. kubelet-split runs here, split and in one-process mode
 * (TARGET=all); the upstream kubelet
 * needs a build of minutes (deploy/upstream-kubelet/build.sh), which the test
 * command does not make.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NAMES, STATUS_GROUP } from '@app/service';
import { REPO_ROOT } from '../deploy/local/stack.js';
import type { BenchResult } from './bench/harness/report.js';

const finite = (what: string, n: unknown) => assert.ok(typeof n === 'number' && Number.isFinite(n) && n >= 0, `${what} is a finite number (got ${String(n)})`);

describe('npm run bench --smoke', { timeout: 300_000 }, () => {
  it('measures every figure on 3 pods (5 for density), in under four minutes, and writes the JSON, the table and the chart', async () => {
    const out = mkdtempSync(join(tmpdir(), 'ks-bench-smoke-'));
    try {
      const t0 = performance.now();
      const child = spawn(process.execPath, [join(REPO_ROOT, 'dist', 'test', 'bench', 'harness', 'bench.js'), '--smoke', '--agents', 'kubelet-split,kubelet-split-one-process', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
      const seconds = (performance.now() - t0) / 1000;
      assert.equal(code, 0, `bench --smoke exited ${code}:\n${stderr}\n${stdout}`);
      assert.ok(seconds < 240, `bench --smoke took ${seconds.toFixed(0)} s`);

      const r = JSON.parse(readFileSync(join(out, 'bench.json'), 'utf8')) as BenchResult;
      assert.equal(r.smoke, true);
      assert.ok(!('error' in r.floor), `raw CRI floor: ${'error' in r.floor ? r.floor.error : ''}`);
      assert.equal(r.floor.sequential.samples.length, 3);
      for (const k of ['p50', 'p90', 'p99'] as const) finite(`floor sequential ${k}`, r.floor.sequential[k]);
      finite('floor burst', r.floor.burst.totalMs);

      assert.ok(!('error' in r.p4), `P4: ${'error' in r.p4 ? r.p4.error : ''}`);
      assert.deepEqual(r.p4.rows.map((x) => x.call), ['ListContainers', 'ContainerStatus']);
      for (const x of r.p4.rows) for (const k of ['grpcP50', 'grpcP99', 'natsP50', 'natsP99'] as const) finite(`P4 ${x.call} ${k}`, x[k]);

      assert.deepEqual(Object.keys(r.agents), ['kubelet-split', 'kubelet-split-one-process']);
      const alone: string[] = SERVICE_NAMES.filter((s) => !(STATUS_GROUP as readonly string[]).includes(s));
      const cases = [
        // The status group's four modules are one process, restarted as one (under the status manager's name).
        { agent: 'kubelet-split', processes: ['nats-server', ...alone, STATUS_GROUP.join(','), 'pod-worker#1'], p5: [...alone, 'status-manager'] },
        { agent: 'kubelet-split-one-process', processes: ['nats-server', 'kubelet (TARGET=all)'], p5: ['kubelet (TARGET=all)'] },
      ];
      for (const tc of cases) {
        const a = r.agents[tc.agent];
        assert.ok(a?.ok, `${tc.agent} did not run: ${a && !a.ok ? a.reason : 'missing'}`);
        assert.equal(a.p1.samples.length, 3);
        for (const k of ['p50', 'p90', 'p99'] as const) finite(`${tc.agent} P1 ${k}`, a.p1[k]);
        assert.equal(a.p2.pods, 3);
        finite(`${tc.agent} P2 total`, a.p2.totalMs);
        for (const k of ['p50', 'p90', 'p99'] as const) finite(`${tc.agent} P2 per pod ${k}`, a.p2.perPod[k]);
        finite(`${tc.agent} P3 CPU`, a.p3.cpuPercent);
        assert.ok(a.p3.rssMb > 50, `${tc.agent} P3 RSS of the whole stack is ${a.p3.rssMb} MB`);
        assert.deepEqual(a.p3.processes.map((p) => p.name).sort(), [...tc.processes].sort(), `${tc.agent} P3 counts each process once`);
        for (const p of a.p3.processes) {
          finite(`${tc.agent} P3 ${p.name} CPU`, p.cpuPercent);
          assert.ok(p.rssMb > 1, `${tc.agent} P3 ${p.name} RSS ${p.rssMb} MB`);
        }
        for (const s of tc.p5) {
          assert.ok((a.p5.services[s]?.length ?? 0) >= 1, `${tc.agent} P5 has ${s}`);
          for (const v of a.p5.services[s] ?? []) finite(`${tc.agent} P5 ${s}`, v);
        }
        finite(`${tc.agent} P6 one pod`, a.p6.one);
        assert.equal(a.p6.many.pods, 3);
        finite(`${tc.agent} P6 three pods`, a.p6.many.totalMs);
        assert.equal(a.p7?.samples.length, 2, `${tc.agent} P7 has its two kills`);
        const d = a.density;
        assert.ok(d, `${tc.agent} has the density figures`);
        assert.equal(d.pods, 5);
        finite(`${tc.agent} density P2`, d.p2.totalMs);
        assert.equal(d.p2.perPod.samples.length, 5);
        finite(`${tc.agent} density P3 CPU`, d.p3.cpuPercent);
        assert.ok(d.p3.rssMb > 50, `${tc.agent} density P3 RSS ${d.p3.rssMb} MB`);
        assert.ok((d.p3.pssMb ?? 0) > 10 && (d.p3.pssMb ?? 0) <= d.p3.rssMb, `${tc.agent} density P3 PSS ${d.p3.pssMb} MB, at most its RSS`);
        assert.deepEqual(d.p3.processes.map((p) => p.name).sort(), [...tc.processes].sort());
        finite(`${tc.agent} density P6`, d.p6.totalMs);
        assert.ok((d.p2.cpu?.processes.length ?? 0) > 0, `${tc.agent} density P2 says where the CPU went`);
      }

      const table = readFileSync(join(out, 'bench.md'), 'utf8');
      for (const figure of ['P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P2 density', 'P3 density', 'P6 density']) assert.match(table, new RegExp(`^\\| ${figure}[ :]`, 'm'), `the table has a ${figure} row`);
      assert.match(stdout, /^\| figure \| raw CRI floor \| kubelet-split \| kubelet-split-one-process \|$/m, 'the table is printed');
      const svg = readFileSync(join(out, 'p1.svg'), 'utf8');
      assert.match(svg, /^<svg /);
      assert.match(svg, /<title>kubelet-split<\/title>/);
      assert.match(svg, /<title>kubelet-split-one-process<\/title>/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
