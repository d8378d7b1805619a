/**
 * `kubelet-split logs` on the real stack (issue 14, Logs): the log server's
 * `/containerLogs` reads what containerd wrote in the CRI log format, follows
 * lines written after the call, shows the previous instance after a restart,
 * honours --tail and --timestamps, and names a bad container clearly.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../deploy/local/stack.js';
import { NodeStack } from './support/node-stack.js';

const IMAGE = 'localhost/kubelet-split/busybox:1.35';
const CLI = join(REPO_ROOT, 'dist', 'apps', 'cli', 'src', 'cli.js');
const pod = (name: string, spec: string) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n${spec}`;

describe('kubelet-split logs on the real stack', { timeout: 180_000 }, () => {
  const stack = new NodeStack({
    node: 'logs-e2e',
    services: ['cri-gateway', 'pleg', 'sync-loop', 'status-manager', 'pod-worker', 'config-source'],
    // The container GC every 2 s: a removed pod's /var/log/containers links are seen to go (by default every minute).
    env: { 'pod-worker': { CRASHLOOP_BACKOFF_INITIAL: '1s', CRASHLOOP_BACKOFF_MAX: '10s', POD_SYNC_BACKOFF: '1s' }, 'sync-loop': { CONTAINER_GC_PERIOD: '2s' } },
  });
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, 'logs', ...args, '--server', stack.api], { encoding: 'utf8', timeout: 20_000 });
  const logsOf = (...args: string[]) => {
    const out = cli(...args);
    assert.equal(out.status, 0, `kubelet-split logs ${args.join(' ')}: ${out.stderr}`);
    return out.stdout;
  };

  before(async () => {
    await stack.start();
    // A line a quarter second, numbered.
    stack.writeManifest('ticker', pod('ticker', `  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.25; done"]\n`));
    await stack.waitForPod('ticker', 'running', (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
  });
  after(() => stack.stop());

  it('shows a container\'s output, decoded from the CRI log format', async () => {
    const lines = await stack.waitFor('three ticks', () => {
      const l = logsOf(stack.podName('ticker')).trim().split('\n');
      return l.length >= 3 ? l : undefined;
    });
    assert.deepEqual(lines.slice(0, 3), ['tick 1', 'tick 2', 'tick 3']);
  });

  it('--tail and --timestamps: the last lines, each with its RFC3339 time', () => {
    const lines = logsOf(stack.podName('ticker'), '--tail', '2', '--timestamps').trim().split('\n');
    assert.equal(lines.length, 2);
    for (const l of lines) assert.match(l, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}) tick \d+$/);
    const [a, b] = lines.map((l) => Number(/tick (\d+)$/.exec(l)?.[1]));
    assert.equal(b, (a ?? 0) + 1);
  });

  it('-f follows lines written after the call', async () => {
    const last = Number(/tick (\d+)\s*$/.exec(logsOf(stack.podName('ticker')))?.[1]);
    const child = spawn(process.execPath, [CLI, 'logs', stack.podName('ticker'), '-f', '--tail', '1', '--server', stack.api]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const seen = await stack.waitFor('a tick written after the call', () => {
        const ticks = [...out.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
        return ticks.some((t) => t > last + 2) ? ticks : undefined;
      }, 15_000);
      // In order, none missed or repeated.
      for (let i = 1; i < seen.length; i++) assert.equal(seen[i], (seen[i - 1] ?? 0) + 1, out);
    } finally {
      child.kill();
    }
  });

  it('--previous shows the previous instance after a restart, and says when there is none', async () => {
    // Counts its runs in an emptyDir that outlives each instance, prints the count, lives 4 s and exits.
    stack.writeManifest(
      'restarter',
      pod(
        'restarter',
        `  restartPolicy: Always\n  volumes:\n    - name: data\n      emptyDir: {}\n  containers:\n    - name: main\n      image: ${IMAGE}\n      command: ["sh", "-c", "n=$(cat /data/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /data/n; echo run $n; echo oops $n >&2; sleep 4; exit 1"]\n      volumeMounts:\n        - name: data\n          mountPath: /data\n`,
      ),
    );
    const name = stack.podName('restarter');
    await stack.waitFor('the first run\'s output', () => (/run 1/.test(cli(name).stdout) ? true : undefined), 60_000);
    const none = cli(name, '--previous');
    assert.equal(none.status, 1, `--previous during the first run (4 s long) printed: ${none.stdout}`);
    assert.equal(none.stderr.trim(), `error: previous terminated container "main" in pod "${name}" not found`);
    // After a restart: the current instance prints run N (stdout and stderr), the previous run N-1.
    const [current, previous] = await stack.waitFor('a restart, seen between two runs, the current run\'s two lines written', () => {
      const prev = cli(name, '--previous');
      if (prev.status !== 0) return undefined;
      const cur = logsOf(name);
      const again = cli(name, '--previous').stdout;
      // Read just after a restart, the new instance may not have written both its lines yet (containerd reads its
      // stdout and stderr apart): the assertions below look at both.
      const run = /run (\d+)/.exec(cur)?.[1];
      const bothWritten = run !== undefined && cur.includes(`oops ${run}`);
      return again === prev.stdout && bothWritten ? [cur, prev.stdout] : undefined; // no restart between the reads
    }, 60_000);
    const n = Number(/run (\d+)/.exec(current)?.[1]);
    assert.ok(n >= 2, current);
    // stdout and stderr both, each line once (containerd reads the two pipes apart: either order).
    assert.deepEqual(current.trim().split('\n').sort(), [`oops ${n}`, `run ${n}`]);
    assert.deepEqual(previous.trim().split('\n').sort(), [`oops ${n - 1}`, `run ${n - 1}`]);
  });

  it('a bad container name gives a clear error, from the CLI and from the log server', async () => {
    const out = cli(stack.podName('ticker'), '-c', 'nope');
    assert.equal(out.status, 1);
    assert.equal(out.stderr.trim(), `error: container nope is not valid for pod ${stack.podName('ticker')}`);
    const res = await fetch(`${stack.api}/containerLogs/default/${stack.podName('ticker')}/nope`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { message: string }).message, `container "nope" not found in pod "${stack.podName('ticker')}"`);
    const missing = cli('no-such-pod');
    assert.equal(missing.stderr.trim(), 'error: pods "no-such-pod" not found');
  });

  it('each container\'s log is linked from /var/log/containers as <pod>_<namespace>_<container>-<id>.log, for log shippers; the links go with the pod', async () => {
    // The stack's LEGACY_CONTAINER_LOGS_DIR (the kubelet's /var/log/containers) is its own directory.
    const links = join(stack.dir, 'containers');
    stack.writeManifest('shipped', pod('shipped', `  containers:\n    - name: app\n      image: ${IMAGE}\n      command: ["sh", "-c", "echo shipped-line; sleep 3600"]\n`));
    const name = stack.podName('shipped');
    const status = await stack.waitForPod('shipped', 'running', (st) => st.containerStatuses?.[0]?.state?.running !== undefined, 60_000);
    const id = (status.containerStatuses?.[0]?.containerID ?? '').replace(/^[^:]+:\/\//, '');
    const link = join(links, `${name}_default_app-${id}.log`);
    const text = await stack.waitFor('the line in the file the link points at', () => {
      try {
        const t = readFileSync(link, 'utf8');
        return t.includes('shipped-line') ? t : undefined;
      } catch {
        return undefined;
      }
    }, 30_000);
    assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a symlink`);
    assert.match(readlinkSync(link), new RegExp(`/default_${name}_[0-9a-f-]+/app/0\\.log$`), 'it points at the container\'s file under the pods\' log root');
    // The CRI log format, as shippers parse it: time, stream, tag, line.
    assert.match(text, /^\S+ stdout F shipped-line$/m);
    stack.removeManifest('shipped');
    const left = await stack.waitFor('the pod\'s links gone', () => {
      const mine = readdirSync(links).filter((f) => f.startsWith(`${name}_`));
      return mine.length === 0 ? mine : undefined;
    }, 60_000);
    assert.deepEqual(left, []);
    // The other pods' links stay.
    assert.ok(readdirSync(links).some((f) => f.startsWith(`${stack.podName('ticker')}_default_main-`)), readdirSync(links).join(', '));
  });
});
