/**
 * Issue 28 item 14: the conformance runner's cleanup runs to its end even
 * when more signals arrive while it runs (a second Ctrl-C, or `timeout`'s
 * SIGINT to the runner and then to its process group): the bridge and the
 * lock, the first steps pushed and so the last run, are always removed. A
 * real process (cleanups-fixture.ts) gets the signals.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const fixture = join(dirname(fileURLToPath(import.meta.url)), 'cleanups-fixture.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** `p`, or `fallback` after `ms` (the timer cleared either way, so that it does not hold the test process). */
async function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const got = await Promise.race([p, new Promise<T>((r) => (timer = setTimeout(() => r(fallback), ms)))]);
  clearTimeout(timer);
  return got;
}

describe('the conformance runner\'s cleanup under signals', () => {
  const cases: { name: string; signals: NodeJS.Signals[] }[] = [
    { name: 'one SIGINT: every step, the last pushed first', signals: ['SIGINT'] },
    { name: 'a second SIGINT while the cleanup runs: it still runs to its end', signals: ['SIGINT', 'SIGINT'] },
    { name: 'SIGINT, then SIGTERM and SIGHUP while the cleanup runs: it still runs to its end', signals: ['SIGINT', 'SIGTERM', 'SIGHUP'] },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ks-cleanups-'));
      const file = join(dir, 'steps');
      try {
        const child = spawn(process.execPath, [fixture, file], { stdio: ['ignore', 'pipe', 'inherit'] });
        const lines: string[] = [];
        const ready = new Promise<void>((res) => createInterface({ input: child.stdout }).on('line', (l) => (lines.push(l), l === 'ready' && res())));
        const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('exit', (code, signal) => res({ code, signal })));
        await within(ready, 30_000, undefined);
        assert.ok(lines.includes('ready'), 'the fixture is ready');
        for (const [i, sig] of tc.signals.entries()) {
          if (i > 0) await sleep(300);
          child.kill(sig);
        }
        const { code, signal } = await within<{ code: number | null; signal: NodeJS.Signals | 'timeout' | null }>(exit, 30_000, { code: null, signal: 'timeout' });
        if (signal === 'timeout') child.kill('SIGKILL');
        let steps: string[] = [];
        try {
          steps = readFileSync(file, 'utf8').trim().split('\n');
        } catch {
          steps = [];
        }
        process.stdout.write(`# ${tc.signals.join(', ')}: exit ${code ?? signal}; steps run: ${steps.join(', ')}\n`);
        assert.deepEqual(steps, ['slow started', 'slow done', 'bridge', 'lock'], 'every step ran, the last pushed first');
        assert.equal(code, 130, 'it exits 130 once the cleanup is done');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
