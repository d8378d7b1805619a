/**
 * Container log rotation on the real containerd (issue 14, Logs): with
 * CONTAINER_LOG_MAX_SIZE 10Ki and CONTAINER_LOG_MAX_FILES 3, a container that
 * writes fast keeps at most 3 log files (the current one, the one rotated
 * last, older ones gzip-compressed), keeps writing into the new file after
 * containerd reopened it (ReopenContainerLog), loses no line among the files
 * kept, and `kubelet-split logs -f` streams on across rotations. The log
 * manager looks every second here instead of every 10.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const CLI = join(REPO_ROOT, 'dist', 'apps', 'cli', 'src', 'cli.js');
const MAX_FILES = 3;
// About 50 numbered lines of about 140 bytes a second (with the CRI prefix): 10Ki every second or two.
const PAD = 'x'.repeat(90);
const WRITER = `i=0; while true; do i=$((i+1)); echo "line $i ${PAD}"; sleep 0.02; done`;
const ROTATED = /^0\.log\.\d{8}-\d{6}(\.gz)?$/;

/** The line numbers in CRI log text, in order. */
const numbers = (text: string) => [...text.matchAll(/ stdout F line (\d+) /g)].map((m) => Number(m[1]));
const consecutive = (ns: number[]) => ns.every((n, i) => i === 0 || n === (ns[i - 1] ?? 0) + 1);

describe('container log rotation on the real containerd', { timeout: 240_000 }, () => {
  const stack = new NodeStack({
    node: 'logrot-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    env: { 'sync-loop': { CONTAINER_LOG_MAX_SIZE: '10Ki', CONTAINER_LOG_MAX_FILES: String(MAX_FILES), CONTAINER_LOG_MONITOR_INTERVAL: '1s' } },
  });
  let dir = '';
  /** The writer's log files now (a compression's `.tmp` left out): names sorted (the rotated ones oldest first, then 0.log). */
  const files = () => readdirSync(dir).filter((f) => f === '0.log' || ROTATED.test(f)).sort((a, b) => (a === '0.log' ? 1 : b === '0.log' ? -1 : a < b ? -1 : 1));

  before(async () => {
    await stack.start();
    stack.writeManifest('writer', `apiVersion: v1\nkind: Pod\nmetadata:\n  name: writer\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", ${JSON.stringify(WRITER)}]\n`);
    await stack.waitForPod('writer', 'running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
    const uid = (await stack.podList()).items.find((p) => p.metadata?.name === stack.podName('writer'))?.metadata?.uid ?? '';
    dir = join(stack.dir, 'logs', `default_${stack.podName('writer')}_${uid}`, 'main');
  });
  after(() => stack.stop());

  it(`keeps at most ${MAX_FILES} files, older ones compressed, and no line lost among them`, async (t) => {
    const t0 = Date.now();
    await stack.waitFor('a compressed rotated log', () => (existsSync(dir) && files().some((f) => f.endsWith('.gz')) ? true : undefined), 60_000);
    t.diagnostic(`first .gz after ${Date.now() - t0}ms`);
    // Watch the directory for 8 s (several rotations): never more than MAX_FILES files, never more than one rotated log left plain.
    const seen = new Set<string>();
    let most = 0;
    for (const end = Date.now() + 8000; Date.now() < end; ) {
      const now = readdirSync(dir).filter((f) => !f.endsWith('.tmp'));
      most = Math.max(most, now.length);
      for (const f of now) seen.add(f);
      assert.ok(now.length <= MAX_FILES, `log files: ${now.join(', ')}`);
      assert.ok(now.filter((f) => ROTATED.test(f) && !f.endsWith('.gz')).length <= 1, `more than one rotated log uncompressed: ${now.join(', ')}`);
      for (const f of now) assert.ok(f === '0.log' || ROTATED.test(f), `unexpected file ${f}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const rotations = [...seen].filter((f) => ROTATED.test(f) && !f.endsWith('.gz')).length;
    t.diagnostic(`${rotations} rotations seen in 8 s; at most ${most} files at once`);
    assert.ok(rotations >= 2, `rotated logs seen: ${[...seen].sort().join(', ')}`);

    // A consistent snapshot (no rotation while reading): the .gz, then the plain rotated log, then 0.log, line after line.
    const snapshot = await stack.waitFor('a snapshot between two rotations', () => {
      const names = files();
      const texts = names.map((f) => {
        const raw = readFileSync(join(dir, f));
        return f.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
      });
      // Not caught between a compression's rename and its removal of the plain log (`Y`, `Y.gz`).
      const [gz, plain] = names;
      // Nor just after a reopen, when the new 0.log holds no line yet.
      const settled = names.length === MAX_FILES && gz?.endsWith('.gz') && plain && !plain.endsWith('.gz') && gz.slice(0, -3) < plain && numbers(texts.at(-1) ?? '').length > 0;
      return settled && files().join() === names.join() ? { names, texts } : undefined;
    }, 30_000);
    const perFile = snapshot.texts.map(numbers);
    for (const [i, ns] of perFile.entries()) assert.ok(ns.length > 0 && consecutive(ns), `${snapshot.names[i] ?? ''}: lines ${ns[0] ?? '-'}..${ns.at(-1) ?? '-'} not consecutive`);
    const all = perFile.flat();
    assert.ok(consecutive(all), `lines across ${snapshot.names.join(', ')}: ${perFile.map((ns) => `${ns[0] ?? '-'}..${ns.at(-1) ?? '-'}`).join(' | ')}`);
    assert.ok((perFile.at(-1)?.[0] ?? 0) > 1, 'the current 0.log is a new file, not the first one');
  });

  it('the container keeps writing into the new file after its log was reopened', async () => {
    const plain = (names: string[]) => names.filter((f) => ROTATED.test(f) && !f.endsWith('.gz')).at(-1);
    const first = plain(files()) ?? '';
    // The next rotation: 0.log reopened, its first line the one after the rotated log's last.
    const next = await stack.waitFor('the next rotation', () => {
      const names = files();
      const rotated = plain(names);
      if (!rotated || rotated <= first) return undefined;
      const r = numbers(readFileSync(join(dir, rotated), 'utf8'));
      const c = numbers(readFileSync(join(dir, '0.log'), 'utf8'));
      return files().join() === names.join() && r.length > 0 && c.length > 0 ? { rotated, rotatedLast: r.at(-1) ?? 0, currentFirst: c[0] ?? 0, currentLast: c.at(-1) ?? 0 } : undefined;
    }, 30_000);
    assert.equal(next.currentFirst, next.rotatedLast + 1, `0.log starts at line ${next.currentFirst}, ${next.rotated} ends at ${next.rotatedLast}`);
    // It grows on (about 50 lines a second): wait for a line past the last one seen, rather than reading once a second
    // later, which can fall just after the next reopen, when 0.log holds no line yet (or is being renamed).
    const later = await stack.waitFor(`a line past ${next.currentLast} in 0.log`, () => {
      const ns = numbers(readFileSync(join(dir, '0.log'), 'utf8'));
      return (ns.at(-1) ?? 0) > next.currentLast ? ns : undefined;
    }, 15_000);
    assert.ok((later.at(-1) ?? 0) > next.currentLast, `0.log did not grow past line ${next.currentLast}`);
  });

  it('kubelet-split logs -f streams on across rotations, no line missed or repeated', async (t) => {
    const rotatedBefore = new Set(files().filter((f) => ROTATED.test(f)).map((f) => f.replace(/\.gz$/, '')));
    const child = spawn(process.execPath, [CLI, 'logs', stack.podName('writer'), '-f', '--tail', '1', '--server', stack.api]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const lines = () => [...out.matchAll(/^line (\d+) /gm)].map((m) => Number(m[1]));
      await stack.waitFor('the first line', () => (lines().length > 0 ? true : undefined), 15_000);
      const start = lines()[0] ?? 0;
      // 400 lines are some 50 KiB: at least three rotations at 10Ki.
      const seen = await stack.waitFor('400 lines followed', () => (lines().length >= 400 ? lines() : undefined), 60_000);
      const rotatedDuring = files().filter((f) => ROTATED.test(f) && !rotatedBefore.has(f.replace(/\.gz$/, '')));
      t.diagnostic(`followed lines ${start}..${seen.at(-1) ?? '-'} across ${rotatedDuring.length}+ rotations (${rotatedDuring.join(', ')})`);
      assert.ok(rotatedDuring.length >= 1, `no rotation while following: ${files().join(', ')}`);
      const gaps = seen.flatMap((n, i) => (i > 0 && n !== (seen[i - 1] ?? 0) + 1 ? [`${seen[i - 1] ?? '-'} -> ${n}`] : []));
      assert.deepEqual(gaps, [], 'lines followed in order, none missed or repeated');
    } finally {
      child.kill();
    }
  });
});
